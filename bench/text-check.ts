/**
 * `/v1/text` output kept identical across a change of the reading code: every corpus
 * document read by the addon in each mode the route has (text and forms, text only, forms
 * only, a page subset out of order, and OCR of scanned pages), written as JSON lines to a
 * file (`write FILE`) or compared with one written before (`compare FILE`: exit 1 and the
 * first differing span per document and mode when anything changed).
 *
 *   npx tsx bench/text-check.ts write /tmp/text-before.jsonl
 *   (change, npm run build:native)
 *   npx tsx bench/text-check.ts compare /tmp/text-before.jsonl
 *
 * OCR of a scanned page is not deterministic across Tesseract builds, never across this
 * check's two runs on one machine; set TEXT_CHECK_OCR=0 to skip that mode.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/config.js';

interface Native {
  init(pdfiumLibPath: string): void;
  readText(pdf: Buffer, options: Record<string, unknown>): unknown;
  readTextOcr(pdf: Buffer, options: Record<string, unknown>): { pages: unknown; fields: unknown };
}

interface ManifestEntry {
  file: string;
  user_password?: string | null;
  owner_password?: string | null;
}

const CORPUS = process.env.PDFEDIT_CORPUS_DIR || path.join(PROJECT_ROOT, '..', 'shared', 'corpus');
const PDFIUM = process.env.PDFIUM_LIB_PATH || path.join(PROJECT_ROOT, 'vendor/pdfium/lib/libpdfium.so');

/** The modes of `/v1/text`, as options of the addon's read (pages filled in per document). */
function modes(pageCount: number): [string, Record<string, unknown>][] {
  const subset = [...new Set([pageCount, 1, Math.ceil(pageCount / 2)])];
  const out: [string, Record<string, unknown>][] = [
    ['text+forms', { text: true, forms: true }],
    ['text', { text: true, forms: false }],
    ['forms', { text: false, forms: true }],
    [`pages ${subset.join(',')}`, { text: true, forms: true, pages: subset }],
  ];
  if (process.env.TEXT_CHECK_OCR !== '0')
    out.push(['ocr', { text: true, forms: true, ocr: { languages: ['eng'] } }]);
  return out;
}

function readAll(): Map<string, string> {
  const require = createRequire(import.meta.url);
  const native = require(path.join(PROJECT_ROOT, 'native', 'index.js')) as Native;
  native.init(PDFIUM);
  const manifest = JSON.parse(readFileSync(path.join(CORPUS, 'manifest.json'), 'utf8')) as ManifestEntry[];
  const out = new Map<string, string>();
  for (const entry of manifest) {
    const pdf = readFileSync(path.join(CORPUS, entry.file));
    const password = entry.user_password ?? entry.owner_password ?? undefined;
    const base = password ? { password } : {};
    let pageCount = 0;
    try {
      const first = native.readText(pdf, { ...base, text: false, forms: false }) as { pages: unknown[] };
      pageCount = first.pages.length;
    } catch (e) {
      out.set(`${entry.file}\topen`, JSON.stringify({ error: String(e) }));
      continue;
    }
    for (const [mode, options] of modes(pageCount)) {
      let result: string;
      try {
        const r = options.ocr
          ? native.readTextOcr(pdf, { ...base, ...options })
          : native.readText(pdf, { ...base, ...options });
        const { pages, fields } = r as { pages: unknown; fields: unknown };
        result = JSON.stringify({ pages, fields });
      } catch (e) {
        result = JSON.stringify({ error: String(e) });
      }
      out.set(`${entry.file}\t${mode}`, result);
    }
  }
  return out;
}

/** The first place two results differ, as a path and the two values. */
function firstDifference(a: unknown, b: unknown, at = ''): string | undefined {
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') {
    return JSON.stringify(a) === JSON.stringify(b)
      ? undefined
      : `${at}: ${JSON.stringify(a)?.slice(0, 300)} != ${JSON.stringify(b)?.slice(0, 300)}`;
  }
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  for (const k of new Set([...ka, ...kb])) {
    const d = firstDifference(
      (a as Record<string, unknown>)[k],
      (b as Record<string, unknown>)[k],
      `${at}.${k}`,
    );
    if (d) return d;
  }
  return undefined;
}

function main(): void {
  const [how, file] = process.argv.slice(2);
  if ((how !== 'write' && how !== 'compare') || !file) {
    console.error('usage: text-check.ts write|compare FILE');
    process.exit(2);
  }
  const now = readAll();
  if (how === 'write') {
    writeFileSync(file, [...now].map(([k, v]) => `${k}\t${v}`).join('\n'));
    console.log(`${now.size} results written to ${file}`);
    return;
  }
  const before = new Map<string, string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [doc, mode, ...rest] = line.split('\t');
    if (doc && mode) before.set(`${doc}\t${mode}`, rest.join('\t'));
  }
  let differ = 0;
  for (const key of new Set([...before.keys(), ...now.keys()])) {
    const a = before.get(key);
    const b = now.get(key);
    if (a === b) continue;
    differ++;
    const where = a && b ? firstDifference(JSON.parse(a), JSON.parse(b)) : a ? 'missing now' : 'new';
    console.log(`DIFFERS ${key.replace('\t', ' [')}]: ${where}`);
  }
  console.log(`${now.size} results, ${differ} differ from ${file}`);
  process.exit(differ ? 1 : 0);
}

main();

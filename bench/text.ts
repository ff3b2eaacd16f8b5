/**
 * `/v1/text` against `pdftotext` (issue 18 items 4 and 6): the engine's read of every page
 * (text and form fields, as the route asks) through the service's engine pool as the route
 * calls it (`readTextSplitJson`: a long read split over two free processes when the pool
 * has them, and the response body written from the engine's JSON as the route does), the
 * same read in one engine process (`pool.readText`), and by the addon in this
 * process (the engine without the pool's IPC), each against `pdftotext FILE -` (Poppler's
 * default mode, the text to stdout, timed as a process). They alternate run by run so they
 * meet the same machine load; medians. The document's budget scan is kept after the
 * warm-up call, as after the service's open of an upload.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/config.js';
import type { EnginePool } from '../src/engine/pool.js';
import { readTextSplitJson } from '../src/engine/text-split.js';
import { rawIsSafe, textResponse } from '../src/routes/text.js';

/** The addon, loaded in this thread for the in-process read. */
interface Native {
  init(pdfiumLibPath: string): void;
  readText(pdf: Buffer, options: Record<string, unknown>): { pages: { spans: unknown[] }[] };
}

export interface TextCase {
  name: string;
  /** Absolute path of the PDF. */
  file: string;
  runs: number;
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

function pdftotext(file: string): void {
  execFileSync('pdftotext', [file, '-'], { stdio: ['ignore', 'ignore', 'ignore'], maxBuffer: 1 << 28 });
}

/** Whether `pdftotext` runs here. */
function havePdftotext(): boolean {
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The route's read without OCR: the engine's JSON, written into the response body. */
async function viaRouteRead(
  pool: EnginePool,
  task: { pdf: Buffer; text: boolean; forms: boolean },
  pageCount: number,
): Promise<Buffer> {
  const json = await readTextSplitJson(pool, task, pageCount);
  if (!rawIsSafe(json.pages) || !rawIsSafe(json.fields)) throw new Error('bench: not sent through');
  return textResponse(pageCount, json);
}

/** Runs the cases; returns table rows (operation, document, p50 ms, pdftotext p50 ms, ratio). */
export async function benchText(
  pool: EnginePool,
  pdfiumLibPath: string,
  cases: TextCase[],
): Promise<string[][]> {
  if (!havePdftotext()) return [['/v1/text vs pdftotext', '', '', '', 'pdftotext not found: skipped']];
  const require = createRequire(import.meta.url);
  const native = require(path.join(PROJECT_ROOT, 'native', 'index.js')) as Native;
  native.init(pdfiumLibPath);
  const rows: string[][] = [];
  for (const c of cases) {
    const pdf = readFileSync(c.file);
    const task = { pdf, text: true, forms: true };
    // Warm-up: the pool's processes and this one each read it once, pdftotext is paged in.
    const first = await pool.readText(task);
    const pageCount = first.pages.length;
    await viaRouteRead(pool, task, pageCount);
    native.readText(pdf, { text: true, forms: true });
    pdftotext(c.file);
    const viaRoute: number[] = [];
    const viaPool: number[] = [];
    const inProcess: number[] = [];
    const poppler: number[] = [];
    for (let i = 0; i < c.runs; i++) {
      let t0 = process.hrtime.bigint();
      await viaRouteRead(pool, task, pageCount);
      viaRoute.push(ms(t0));
      t0 = process.hrtime.bigint();
      await pool.readText(task);
      viaPool.push(ms(t0));
      t0 = process.hrtime.bigint();
      native.readText(pdf, { text: true, forms: true });
      inProcess.push(ms(t0));
      t0 = process.hrtime.bigint();
      pdftotext(c.file);
      poppler.push(ms(t0));
    }
    const spans = first.pages.reduce((n, p) => n + p.spans.length, 0);
    const ref = median(poppler);
    const fmt = (n: number) => n.toFixed(1);
    for (const [how, values] of [
      ['/v1/text read (engine pool)', viaRoute],
      ['/v1/text read (one engine process)', viaPool],
      ['/v1/text read (addon, in process)', inProcess],
    ] as const) {
      const p50 = median(values);
      rows.push([how, c.name, fmt(p50), fmt(ref), `${(p50 / ref).toFixed(2)}x`]);
    }
    rows.push(['', '', '', '', `${first.pages.length} pages, ${spans} spans, ${c.runs} runs`]);
  }
  return rows;
}

/**
 * CPU of `/v1/text`'s read against `pdftotext FILE -` per corpus document (issue 18 item 4:
 * on par on every document). Ours: the addon's `readText` (text and forms, as the route
 * asks) in this process, `process.cpuUsage` around the call; theirs: each run's own user +
 * system time as the kernel accounts the finished child (`wait4`, through a small Python
 * loop, so neither start-up is Node's). Medians of RUNS (default 7) runs each.
 *
 *   npx tsx bench/text-cpu.ts [RUNS] [ADDON_B.node]
 *
 * With a second addon build, it is read too, alternating with the first, and its column
 * and the ratio of the two are added: an A/B of two builds under the same machine load.
 * Scanned documents (no text layer worth the name: pdftotext reads nothing) are listed
 * but left out of the totals.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/config.js';

interface Native {
  init(pdfiumLibPath: string): void;
  readText(pdf: Buffer, options: Record<string, unknown>): { pages: { spans: unknown[] }[] };
}

interface ManifestEntry {
  file: string;
  user_password?: string | null;
  owner_password?: string | null;
}

const CORPUS = process.env.PDFEDIT_CORPUS_DIR || path.join(PROJECT_ROOT, '..', 'shared', 'corpus');
const PDFIUM = process.env.PDFIUM_LIB_PATH || path.join(PROJECT_ROOT, 'vendor/pdfium/lib/libpdfium.so');

/** Runs `pdftotext` `runs` times; each run's child CPU in ms (wait4's rusage). */
const POPPLER = `
import os, sys, json
file, pw, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
args = ['pdftotext'] + (['-upw', pw] if pw else []) + [file, '-']
out = []
for _ in range(runs):
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1); os.dup2(fd, 2)
        os.execvp('pdftotext', args)
    _, _, ru = os.wait4(pid, 0)
    out.append((ru.ru_utime + ru.ru_stime) * 1000)
print(json.dumps(out))
`;

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

function cpuMs(f: () => void): number {
  const t0 = process.cpuUsage();
  f();
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / 1000;
}

function main(): void {
  const runs = Number(process.argv[2] ?? 7);
  const require = createRequire(import.meta.url);
  const a = require(path.join(PROJECT_ROOT, 'native', 'index.js')) as Native;
  a.init(PDFIUM);
  const bPath = process.argv[3];
  const b = bPath ? (require(path.resolve(bPath)) as Native) : undefined;
  b?.init(PDFIUM);
  const manifest = JSON.parse(readFileSync(path.join(CORPUS, 'manifest.json'), 'utf8')) as ManifestEntry[];
  const rows: string[][] = [];
  let sumA = 0;
  let sumB = 0;
  let sumP = 0;
  let above = 0;
  for (const entry of manifest) {
    const file = path.join(CORPUS, entry.file);
    const pdf = readFileSync(file);
    const password = entry.user_password ?? entry.owner_password ?? undefined;
    const options = { ...(password ? { password } : {}), text: true, forms: true };
    let first: ReturnType<Native['readText']>;
    try {
      first = a.readText(pdf, options);
      b?.readText(pdf, options);
    } catch (e) {
      rows.push([entry.file, 'error', String(e)]);
      continue;
    }
    const ta: number[] = [];
    const tb: number[] = [];
    for (let i = 0; i < runs; i++) {
      ta.push(cpuMs(() => a.readText(pdf, options)));
      if (b) tb.push(cpuMs(() => b.readText(pdf, options)));
    }
    const poppler = JSON.parse(
      execFileSync('python3', ['-c', POPPLER, file, password ?? '', String(runs)], { encoding: 'utf8' }),
    ) as number[];
    const text = execFileSync('pdftotext', [...(password ? ['-upw', password] : []), file, '-'], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    });
    const scan = text.replace(/\s/g, '').length < 20 * first.pages.length;
    const ma = median(ta);
    const mp = median(poppler);
    const row = [entry.file, String(first.pages.length), ma.toFixed(1)];
    if (b) {
      const mb = median(tb);
      row.push(mb.toFixed(1), (ma / mb).toFixed(2));
      if (!scan) sumB += mb;
    }
    row.push(mp.toFixed(1), `${(ma / mp).toFixed(2)}x`, scan ? 'scan' : '');
    rows.push(row);
    if (!scan) {
      sumA += ma;
      sumP += mp;
      if (ma > mp) above++;
    }
  }
  const head = ['document', 'pages', 'ours ms'];
  if (b) head.push('B ms', 'ours/B');
  head.push('pdftotext ms', 'ours/pdftotext', '');
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const r of [head, ...rows]) console.log(r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  '));
  const tail = b ? `, B ${sumB.toFixed(0)} ms` : '';
  console.log(
    `\nnon-scan documents: ours ${sumA.toFixed(0)} ms${tail}, pdftotext ${sumP.toFixed(0)} ms; ${above} above 1.0x`,
  );
}

main();

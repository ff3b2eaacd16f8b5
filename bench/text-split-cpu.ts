/**
 * What splitting `/v1/text`'s read over two engine processes (src/engine/text-split.ts)
 * saves, measured in CPU time so that other load on the machine does not hide it: each
 * engine process's user + system time (/proc/PID/stat, 10 ms ticks) around the route's
 * read (`readTextSplit`) and around the one-process read (`pool.readText`), alternating;
 * medians. With two free cores the split's wall time is about its busier half's CPU; on a
 * machine busy with other work both halves share what is left, and wall clocks (as `npm
 * run bench` prints) show little. `pdftotext FILE -`'s CPU (wait4's rusage) for scale.
 *
 *   npx tsx bench/text-split-cpu.ts [RUNS] [FILE...]
 *
 * Linux only (/proc). Default files: the corpus's 14- and 19-page documents.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/config.js';
import { EnginePool } from '../src/engine/pool.js';
import { readTextSplit } from '../src/engine/text-split.js';

const CORPUS = process.env.PDFEDIT_CORPUS_DIR || path.join(PROJECT_ROOT, '..', 'shared', 'corpus');
const PDFIUM = process.env.PDFIUM_LIB_PATH || path.join(PROJECT_ROOT, 'vendor/pdfium/lib/libpdfium.so');

/** CPU ms of process `pid` so far (utime + stime, clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

const POPPLER = `
import os, sys, json
out = []
for _ in range(int(sys.argv[2])):
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1); os.dup2(fd, 2)
        os.execvp('pdftotext', ['pdftotext', sys.argv[1], '-'])
    _, _, ru = os.wait4(pid, 0)
    out.append((ru.ru_utime + ru.ru_stime) * 1000)
print(json.dumps(out))
`;

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 9);
  const files = process.argv.slice(3);
  if (files.length === 0) {
    files.push(
      path.join(CORPUS, 'font-type1-pdftex-tracemonkey-2col.pdf'),
      path.join(CORPUS, 'font-cid-cff-identityh-us-constitution.pdf'),
    );
  }
  const pool = new EnginePool({ pdfiumLibPath: PDFIUM, processes: 2, timeoutMs: 120_000 });
  try {
    console.log(
      `load average at start: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}\n`,
    );
    console.log(
      'document  pages  one process  split: busier half  split: both  pdftotext  (CPU ms, medians)',
    );
    for (const file of files) {
      const pdf = readFileSync(file);
      const task = { pdf, text: true, forms: true };
      const pageCount = (await pool.readText(task)).pages.length;
      // Both processes read it once (and keep its budget scan), as after warm-up.
      await readTextSplit(pool, task, pageCount);
      await readTextSplit(pool, task, pageCount);
      const snap = () => pool.pids.map(cpuMs);
      const one: number[] = [];
      const busier: number[] = [];
      const both: number[] = [];
      for (let i = 0; i < runs; i++) {
        let before = snap();
        await readTextSplit(pool, task, pageCount);
        const split = snap().map((v, k) => v - (before[k] ?? v));
        busier.push(Math.max(...split));
        both.push(split.reduce((a, b) => a + b, 0));
        before = snap();
        await pool.readText(task);
        one.push(snap().reduce((a, v, k) => a + v - (before[k] ?? v), 0));
      }
      const poppler = JSON.parse(
        execFileSync('python3', ['-c', POPPLER, file, String(runs)], { encoding: 'utf8' }),
      ) as number[];
      console.log(
        [
          path.basename(file),
          pageCount,
          median(one),
          median(busier),
          median(both),
          median(poppler).toFixed(0),
        ].join('  '),
      );
    }
    console.log(
      `\nload average at end: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await pool.close();
  }
}

await main();

/**
 * The edit benchmark of `npm run bench` (issue 3): a one-phrase verified replace on a
 * 1-page and on the largest corpus document, p50/p95 through the service's worker pool, the
 * engine's own time split by stage (parse, edit, render, diff, save), and the floor to
 * compare with: two bare PDFium renders of the touched page at the verification resolution
 * (the least any render-before-and-after check can cost), and PyMuPDF's unverified edit of
 * the same phrase (bench/pymupdf_edit.py in vendor/venv, timed inside Python).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EditTimings } from '../native/index.js';
import { PROJECT_ROOT } from '../src/config.js';
import type { EnginePool } from '../src/engine/pool.js';
import type { EngineEditResult } from '../src/engine/tasks.js';

/** The addon, loaded in this thread for the bare renders (the edits go through the pool). */
interface Native {
  init(pdfiumLibPath: string): void;
  bareRender(pdf: Buffer, page: number, password?: string | null): { width: number; height: number };
}

export interface EditCase {
  name: string;
  /** Absolute path of the PDF. */
  file: string;
  find: string;
  replace: string;
  runs: number;
  /** The SAMPLE mark, as test-mode and keyless callers get it. */
  mark?: string;
  /** A stored document edited again (`source.file_id`): the sync route asks the engine
   * for its template cache, so every run after the warm-up reuses the render before. */
  stored?: boolean;
}

const STAGES: (keyof EditTimings)[] = [
  'parse_ms',
  'edit_ms',
  'render_ms',
  'diff_ms',
  'save_ms',
  'mark_ms',
  'total_ms',
];

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

function median(values: number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

/**
 * The largest corpus document made 100+ pages long by repeating its pages with qpdf, in a
 * scratch folder (the corpus has no 100-page document); `undefined` without qpdf.
 */
export function syntheticHundredPages(
  source: string,
  pages: number,
): { file: string; cleanup(): void } | undefined {
  const dir = mkdtempSync(path.join(tmpdir(), 'pdfedit-bench-'));
  const file = path.join(dir, 'hundred.pdf');
  const copies = Math.ceil(100 / pages);
  try {
    execFileSync('qpdf', ['--empty', '--pages', ...Array(copies).fill(source), '--', file], {
      stdio: 'pipe',
    });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  return { file, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** One case's ratios (p50 against p50), for the bench's targets. */
export interface EditRatios {
  name: string;
  pages: number;
  /** Our verified replace (pool, end to end) over the floor. */
  floor: number;
  /** Our verified replace over PyMuPDF's unverified one; undefined when it was skipped. */
  pymupdf: number | undefined;
  /** The floor itself over PyMuPDF's unverified edit: the least any edit verified by
   * rendering the page before and after can reach against PyMuPDF (a fresh edit renders
   * twice; a stored one, whose render before is kept, once: half the floor). */
  floorVsPymupdf: number | undefined;
}

const VENV_PYTHON = path.join(PROJECT_ROOT, 'vendor', 'venv', 'bin', 'python');
const PYMUPDF_SCRIPT = path.join(PROJECT_ROOT, 'bench', 'pymupdf_edit.py');

interface PyMuPdfTiming {
  version: string;
  page?: number;
  p50_ms?: number;
  p95_ms?: number;
  runs?: number;
  error?: string;
}

/** PyMuPDF's unverified edit of the case, or why it was skipped. */
function pymupdfEdit(c: EditCase): PyMuPdfTiming | { skipped: string } {
  if (!existsSync(VENV_PYTHON)) return { skipped: 'vendor/venv is absent (scripts/setup.sh installs it)' };
  try {
    const out = execFileSync(VENV_PYTHON, [PYMUPDF_SCRIPT, c.file, c.find, c.replace, String(c.runs)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 300_000,
    });
    return JSON.parse(out.trim().split('\n').pop() ?? '{}') as PyMuPdfTiming;
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? '');
    if (stderr.includes("No module named 'pymupdf'"))
      return { skipped: 'pymupdf is not installed in vendor/venv' };
    return { skipped: `the script failed: ${stderr.trim().split('\n').pop() ?? (err as Error).message}` };
  }
}

/** Runs the cases; returns table rows (operation, document, p50, p95, notes) and the ratios. */
export async function benchEdits(
  pool: EnginePool,
  pdfiumLibPath: string,
  cases: EditCase[],
): Promise<{ rows: string[][]; ratios: EditRatios[] }> {
  const require = createRequire(import.meta.url);
  const native = require(path.join(PROJECT_ROOT, 'native', 'index.js')) as Native;
  native.init(pdfiumLibPath);
  const rows: string[][] = [];
  const ratios: EditRatios[] = [];
  for (const c of cases) {
    const pdf = readFileSync(c.file);
    const task = {
      pdf,
      edits: [
        {
          index: 0,
          op: 'replace' as const,
          find: c.find,
          replace: c.replace,
          scope: { occurrence: 'first' as const },
        },
      ],
      options: {
        font: { policy: 'prefer_exact' } as const,
        break_signature: false,
        ...(c.mark ? { mark: c.mark } : {}),
        ...(c.stored ? { template_cache: true } : {}),
      },
    };
    const first = await pool.edit(task); // warm-up, and a check that the edit applies
    const change = first.changes[0];
    if (!change?.verified) {
      const why = first.failed[0]?.reason ?? (first.unmatched.length ? 'unmatched' : 'no change');
      rows.push(['verified replace', c.name, '', '', `NOT APPLIED (${why}): numbers would be meaningless`]);
      continue;
    }
    // Edit and floor alternate run by run, so both meet the same machine load.
    const wall: number[] = [];
    const floor: number[] = [];
    const results: EngineEditResult[] = [];
    native.bareRender(pdf, change.page);
    let size = { width: 0, height: 0 };
    for (let i = 0; i < c.runs; i++) {
      let t0 = process.hrtime.bigint();
      results.push(await pool.edit(task));
      wall.push(ms(t0));
      // The floor: two bare renders of the touched page, as the verification renders it.
      t0 = process.hrtime.bigint();
      native.bareRender(pdf, change.page);
      size = native.bareRender(pdf, change.page);
      floor.push(ms(t0));
    }
    wall.sort((a, b) => a - b);
    floor.sort((a, b) => a - b);
    const fmt = (n: number) => n.toFixed(1);
    rows.push([
      'verified replace (pool, end to end)',
      c.name,
      fmt(quantile(wall, 0.5)),
      fmt(quantile(wall, 0.95)),
      `${c.runs} runs; "${c.find}" → "${c.replace}", page ${change.page}, ${change.font_source}`,
    ]);
    for (const stage of STAGES.filter((s) => s !== 'mark_ms' || c.mark)) {
      const values = results.map((r) => r.timings[stage]).sort((a, b) => a - b);
      rows.push([
        `  engine ${stage.replace(/_ms$/, '')}`,
        c.name,
        fmt(quantile(values, 0.5)),
        fmt(quantile(values, 0.95)),
        '',
      ]);
    }
    const overhead = median(wall) / Math.max(0.001, median(floor));
    rows.push([
      '  floor: 2 bare PDFium renders',
      c.name,
      fmt(quantile(floor, 0.5)),
      fmt(quantile(floor, 0.95)),
      `${size.width}x${size.height} px each; the edit costs ${overhead.toFixed(1)}x the floor`,
    ]);
    const py = c.mark ? undefined : pymupdfEdit(c);
    let pymupdf: number | undefined;
    let floorVsPymupdf: number | undefined;
    if (py && 'skipped' in py) {
      rows.push(['  PyMuPDF unverified edit', c.name, '', '', `skipped: ${py.skipped}`]);
    } else if (py?.error !== undefined || (py && py.p50_ms === undefined)) {
      rows.push(['  PyMuPDF unverified edit', c.name, '', '', `skipped: ${py.error ?? 'no timing'}`]);
    } else if (py) {
      pymupdf = median(wall) / Math.max(0.001, py.p50_ms!);
      floorVsPymupdf = (median(floor) * (c.stored ? 0.5 : 1)) / Math.max(0.001, py.p50_ms!);
      rows.push([
        `  PyMuPDF ${py.version} unverified edit`,
        c.name,
        fmt(py.p50_ms!),
        fmt(py.p95_ms!),
        `${py.runs} runs, page ${py.page}: open bytes, search_for, redact, insert_text Helvetica, tobytes; ours ${pymupdf.toFixed(2)}x`,
      ]);
    }
    if (!c.mark)
      ratios.push({
        name: c.name,
        pages: (await pool.open(pdf)).pageCount,
        floor: overhead,
        pymupdf,
        floorVsPymupdf,
      });
  }
  return { rows, ratios };
}

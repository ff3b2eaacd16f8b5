import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type CallTrace, EnginePool } from '../../src/engine/pool.js';
import type { TextTask } from '../../src/engine/tasks.js';
import { readTextSplit, SPLIT_MIN_PAGES } from '../../src/engine/text-split.js';
import { corpus, corpusPath } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';

/** Long documents: plain text, two columns, forms whose fields sit on many pages, signed. */
const LONG = [
  'font-cid-cff-identityh-us-constitution.pdf',
  'font-type1-pdftex-tracemonkey-2col.pdf',
  'form-cms1490s-medicare-18p-partly-filled.pdf',
  'form-cra-cannabis-return-combed-13p.pdf',
  'sig-federal-register-gpo-15p.pdf',
];

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Issue 18 item 4: `/v1/text` splits a long read over two free engine processes and joins
 * the halves into exactly the answer one process gives.
 */
describe.skipIf(!HAVE_CORPUS)('text read split over two engine processes', () => {
  let pool: EnginePool;
  const traces: CallTrace[] = [];
  const pageCounts = new Map(corpus().map((e) => [e.file, e.pages]));

  beforeAll(async () => {
    pool = new EnginePool({
      pdfiumLibPath: loadConfig({}).pdfiumLibPath,
      processes: 2,
      timeoutMs: 120_000,
      onCall: (t) => traces.push(t),
    });
    await pool.open(readFileSync(corpusPath(LONG[0]!)));
    await until(() => pool.stats.free === 2);
  });
  afterAll(async () => pool?.close());

  /** The split read and the one-process read of `task`; the split's engine calls. */
  async function both(file: string, task: Omit<TextTask, 'op' | 'pdf'>) {
    const pdf = readFileSync(corpusPath(file));
    const pageCount = pageCounts.get(file) ?? 0;
    expect(pageCount, `${file} in the manifest`).toBeGreaterThanOrEqual(SPLIT_MIN_PAGES);
    await until(() => pool.stats.free === 2);
    traces.length = 0;
    const split = await readTextSplit(pool, { pdf, ...task }, pageCount);
    const calls = traces.filter((t) => t.op === 'text');
    const single = await pool.readText({ pdf, ...task });
    return { split, single, calls };
  }

  for (const file of LONG) {
    it(`gives the one-process answer, read by both processes: ${file}`, async () => {
      const { split, single, calls } = await both(file, { text: true, forms: true });
      expect(calls.length).toBe(2);
      expect(new Set(calls.map((c) => c.pid)).size).toBe(2);
      // The two reads overlapped in time.
      const [a, b] = calls as [CallTrace, CallTrace];
      expect(Math.max(a.startedAt, b.startedAt)).toBeLessThan(Math.min(a.endedAt, b.endedAt));
      expect(split.pages.length).toBe(pageCounts.get(file));
      expect(split).toStrictEqual(single);
    });
  }

  it('gives the one-process answer for a page subset asked out of order, with repeats', async () => {
    const file = 'form-cms1490s-medicare-18p-partly-filled.pdf';
    const pages = [17, 2, 9, 4, 2, 12, 1, 15, 6, 18];
    const { split, single, calls } = await both(file, { text: true, forms: true, pages });
    expect(calls.length).toBe(2);
    expect(split.pages.map((p) => p.page)).toEqual([1, 2, 4, 6, 9, 12, 15, 17, 18]);
    expect(split.fields.length).toBeGreaterThan(0);
    expect(split).toStrictEqual(single);
  });

  it('reads in one process below the page threshold, forms only, or when a process is busy', async () => {
    const file = 'font-cid-cff-identityh-us-constitution.pdf';
    const pdf = readFileSync(corpusPath(file));
    const pageCount = pageCounts.get(file)!;
    const few = Array.from({ length: SPLIT_MIN_PAGES - 1 }, (_, i) => i + 1);
    for (const task of [
      { pdf, text: true, forms: true, pages: few },
      { pdf, text: false, forms: true },
    ]) {
      await until(() => pool.stats.free === 2);
      traces.length = 0;
      await readTextSplit(pool, task, pageCount);
      expect(traces.filter((t) => t.op === 'text').length).toBe(1);
    }
    await until(() => pool.stats.free === 2);
    traces.length = 0;
    const busy = pool.readText({ pdf, text: true, forms: true });
    const [one, split] = await Promise.all([
      busy,
      readTextSplit(pool, { pdf, text: true, forms: true }, pageCount),
    ]);
    expect(traces.filter((t) => t.op === 'text').length).toBe(2);
    expect(split).toStrictEqual(one);
  });
});

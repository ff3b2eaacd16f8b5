import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type CallTrace, EnginePool } from '../../src/engine/pool.js';
import type { EngineEditResult } from '../../src/engine/tasks.js';
import { corpusPath } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';

/**
 * Issue 18 item 3: a batch's records ask their engine process to reuse the template's
 * renders (`options.template_cache`, set by runEdit for a batch record). Each record's
 * result is the one an uncached edit gives.
 */
describe.skipIf(!HAVE_CORPUS)('options.template_cache', () => {
  let pool: EnginePool;
  beforeAll(() => {
    pool = new EnginePool({ pdfiumLibPath: loadConfig({}).pdfiumLibPath, processes: 1, timeoutMs: 60_000 });
  });
  afterAll(async () => pool?.close());

  const record = (templateCache: boolean, i: number) =>
    pool.edit({
      pdf: readFileSync(corpusPath(INVOICE)),
      edits: [
        { index: 0, op: 'replace', find: 'Bayside Wholesale', replace: `Client ${i} Wholesale` },
        { index: 1, op: 'replace', find: 'INV-0046', replace: `INV-${1000 + i}` },
      ],
      options: {
        font: { policy: 'prefer_exact' },
        break_signature: false,
        lazy_previews: true,
        ...(templateCache ? { template_cache: true } : {}),
      },
    });
  const comparable = (r: EngineEditResult) => ({ ...r, timings: undefined });

  it('gives every record the result an uncached edit gives', async () => {
    const before = pool.stats.completed;
    for (let i = 0; i < 3; i++) {
      const viaCache = await record(true, i);
      const plain = await record(false, i);
      expect(viaCache.changes.length, `record ${i}`).toBe(4);
      expect(viaCache.failed).toEqual([]);
      expect(comparable(viaCache)).toEqual(comparable(plain));
    }
    expect(pool.stats.completed - before).toBe(6);
  });

  /** A batch record of `template` (the same object each time: the same template). */
  const templateRecord = (template: Buffer, i: number, on: EnginePool = pool, timeoutMs?: number) =>
    on.edit(
      {
        pdf: template,
        edits: [{ index: 0, op: 'replace', find: 'Bayside Wholesale', replace: `Client ${i} Wholesale` }],
        options: {
          font: { policy: 'prefer_exact' },
          break_signature: false,
          lazy_previews: true,
          template_cache: true,
        },
      },
      timeoutMs,
    );

  it('sends a template to its process once; a changed template is sent and edited as itself', async () => {
    const template = readFileSync(corpusPath(INVOICE));
    const reused = pool.templatesReused;
    const first = await templateRecord(template, 1);
    const again = await templateRecord(template, 2);
    expect(pool.templatesReused - reused).toBe(1);
    // The record sent without its bytes is the record edited from them.
    const plain = await pool.edit({
      pdf: readFileSync(corpusPath(INVOICE)),
      edits: [{ index: 0, op: 'replace', find: 'Bayside Wholesale', replace: 'Client 2 Wholesale' }],
      options: { font: { policy: 'prefer_exact' }, break_signature: false, lazy_previews: true },
    });
    expect(comparable(again)).toEqual(comparable(plain));
    expect(Buffer.from(again.pdf).equals(Buffer.from(first.pdf))).toBe(false);
    // Another template object (here: other bytes, the output of the first record) is sent
    // with its bytes and edited as itself, not as the template the process holds.
    const changed = Buffer.from(first.pdf);
    const fromChanged = await pool.edit({
      pdf: changed,
      edits: [{ index: 0, op: 'replace', find: 'Client 1 Wholesale', replace: 'Client 3 Wholesale' }],
      options: {
        font: { policy: 'prefer_exact' },
        break_signature: false,
        lazy_previews: true,
        template_cache: true,
      },
    });
    expect(pool.templatesReused - reused).toBe(1);
    expect(fromChanged.changes.length).toBeGreaterThan(0);
    expect(fromChanged.unmatched).toEqual([]);
    // And the first template is still kept: its next record goes without bytes.
    const third = await templateRecord(template, 4);
    expect(pool.templatesReused - reused).toBe(2);
    expect(third.changes.length).toBe(first.changes.length);
  });

  it("sends a batch's next record to its busy process, which starts it without waiting for this process", async () => {
    const traces: CallTrace[] = [];
    let blockedUntil = 0;
    const traced = new EnginePool({
      pdfiumLibPath: loadConfig({}).pdfiumLibPath,
      processes: 1,
      timeoutMs: 60_000,
      onCall: (t) => {
        traces.push(t);
        // The API process busy for 300 ms as the first record's answer arrives (storing
        // it, another record's bookkeeping): the engine process must not wait for it.
        if (traces.length === 1) {
          const end = Date.now() + 300;
          while (Date.now() < end) {}
          blockedUntil = performance.timeOrigin + performance.now();
        }
      },
    });
    try {
      const template = readFileSync(corpusPath(INVOICE));
      await templateRecord(template, 0, traced); // the process is up and holds the template
      traces.length = 0;
      const [a, b] = await Promise.all([
        templateRecord(template, 1, traced),
        templateRecord(template, 2, traced),
      ]);
      expect(a.changes.length).toBeGreaterThan(0);
      expect(b.changes.length).toBeGreaterThan(0);
      expect(traces).toHaveLength(2);
      // The second record started while this process was still busy with the first answer.
      expect(traces[1]!.startedAt).toBeLessThan(blockedUntil);
      expect(traces[1]!.startedAt).toBeGreaterThanOrEqual(traces[0]!.endedAt);
    } finally {
      await traced.close();
    }
  });

  it('runs a record that waited behind a record over its budget on a fresh process', async () => {
    const template = readFileSync(corpusPath(INVOICE));
    await templateRecord(template, 0);
    const pid = pool.pids[0];
    // The first record's budget (1 ms) ends while it runs: its process is killed with the
    // record waiting behind it, which then runs on the process that replaces it.
    const [late, next] = await Promise.allSettled([
      templateRecord(template, 1, pool, 1),
      templateRecord(template, 2),
    ]);
    expect(late.status).toBe('rejected');
    expect(((late as PromiseRejectedResult).reason as { code?: string }).code).toBe('engine_timeout');
    expect(next.status).toBe('fulfilled');
    expect((next as PromiseFulfilledResult<EngineEditResult>).value.changes.length).toBeGreaterThan(0);
    expect(pool.pids[0]).not.toBe(pid);
  });

  it('sends the bytes again when a process does not hold the template the pool thought it held', async () => {
    // The pool mirrors each process's shelf; should they disagree, the process answers that
    // it lacks the template and the pool sends it the bytes, also for a record that was
    // waiting in the process behind that one.
    const fresh = new EnginePool({
      pdfiumLibPath: loadConfig({}).pdfiumLibPath,
      processes: 1,
      timeoutMs: 60_000,
    });
    try {
      fresh.start();
      const slots = (
        fresh as unknown as {
          slots: Set<{ ready: boolean; templates: { put(k: string, v: true, n: number): void } }>;
        }
      ).slots;
      const until = Date.now() + 10_000;
      while (![...slots].some((s) => s.ready) && Date.now() < until)
        await new Promise((r) => setTimeout(r, 20));
      // The first template object this pool sees gets key '1': claim the process holds it.
      for (const slot of slots) slot.templates.put('1', true, 1);
      const template = readFileSync(corpusPath(INVOICE));
      const results = await Promise.all([1, 2, 3].map((i) => templateRecord(template, i, fresh)));
      for (const r of results) {
        expect(r.changes.length).toBeGreaterThan(0);
        expect(r.unmatched).toEqual([]);
      }
      expect(fresh.stats.completed).toBe(3);
    } finally {
      await fresh.close();
    }
  });
});

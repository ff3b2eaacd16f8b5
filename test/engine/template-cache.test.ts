import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { EnginePool, withTemplateCache } from '../../src/engine/pool.js';
import type { EngineEditResult } from '../../src/engine/tasks.js';
import { corpusPath } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';

/**
 * Issue 18 item 3: a batch's records call the engine through withTemplateCache, which
 * asks the engine process to reuse the template's renders. Each record's result is the
 * one the plain pool gives, and the view is the same pool (its calls count in its stats).
 */
describe.skipIf(!HAVE_CORPUS)('withTemplateCache', () => {
  let pool: EnginePool;
  beforeAll(() => {
    pool = new EnginePool({ pdfiumLibPath: loadConfig({}).pdfiumLibPath, processes: 1, timeoutMs: 60_000 });
  });
  afterAll(async () => pool?.close());

  const record = (engine: EnginePool, i: number) =>
    engine.edit({
      pdf: readFileSync(corpusPath(INVOICE)),
      edits: [
        { index: 0, op: 'replace', find: 'Bayside Wholesale', replace: `Client ${i} Wholesale` },
        { index: 1, op: 'replace', find: 'INV-0046', replace: `INV-${1000 + i}` },
      ],
      options: { font: { policy: 'prefer_exact' }, break_signature: false, lazy_previews: true },
    });
  const comparable = (r: EngineEditResult) => ({ ...r, timings: undefined });

  it('gives every record the result an uncached edit gives, through the same pool', async () => {
    const cached = withTemplateCache(pool);
    const before = pool.stats.completed;
    for (let i = 0; i < 3; i++) {
      const viaCache = await record(cached, i);
      const plain = await record(pool, i);
      expect(viaCache.changes.length, `record ${i}`).toBe(4);
      expect(viaCache.failed).toEqual([]);
      expect(comparable(viaCache)).toEqual(comparable(plain));
    }
    expect(pool.stats.completed - before).toBe(6);
    expect(cached.stats).toEqual(pool.stats);
  });
});

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { EnginePool } from '../../src/engine/pool.js';
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
});

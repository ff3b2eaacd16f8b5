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

  it('sends a template to its process once; a changed template is sent and edited as itself', async () => {
    const template = readFileSync(corpusPath(INVOICE));
    const edit = (pdf: Buffer, i: number) =>
      pool.edit({
        pdf,
        edits: [{ index: 0, op: 'replace', find: 'Bayside Wholesale', replace: `Client ${i} Wholesale` }],
        options: {
          font: { policy: 'prefer_exact' },
          break_signature: false,
          lazy_previews: true,
          template_cache: true,
        },
      });
    const reused = pool.templatesReused;
    const first = await edit(template, 1);
    const again = await edit(template, 2);
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
    const third = await edit(template, 4);
    expect(pool.templatesReused - reused).toBe(2);
    expect(third.changes.length).toBe(first.changes.length);
  });
});

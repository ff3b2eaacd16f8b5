import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { EnginePool } from '../../src/engine/pool.js';
import { ApiError } from '../../src/kernel/api-error.js';
import { corpusPath } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const TWO_COLUMN = 'font-type1-pdftex-tracemonkey-2col.pdf';
const INVOICE = 'doc-invoice-itextsharp-demo.pdf';

/**
 * Issue 6: a synchronous engine call over its budget answers engine_timeout (504), and the
 * pool keeps serving: the process that ran it is ended and the next call gets a fresh one
 * (test/engine/process-pool.test.ts checks the process side).
 */
describe.skipIf(!HAVE_CORPUS)('engine pool budget', () => {
  let pool: EnginePool;
  beforeAll(() => {
    pool = new EnginePool({ pdfiumLibPath: loadConfig({}).pdfiumLibPath, processes: 1, timeoutMs: 1 });
  });
  afterAll(async () => pool?.close());

  it('answers engine_timeout past the budget, then serves the next call', async () => {
    const slow = pool.readText({ pdf: readFileSync(corpusPath(TWO_COLUMN)), text: true, forms: false });
    const err = await slow.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('engine_timeout');
    expect((err as ApiError).status).toBe(504);
    // The same pool, a generous budget for this call: a fresh process serves it.
    const result = await pool.edit(
      {
        pdf: readFileSync(corpusPath(INVOICE)),
        edits: [{ index: 0, op: 'replace', find: 'INV-0046', replace: 'INV-0064' }],
        options: { font: { policy: 'prefer_exact' }, break_signature: false },
      },
      60_000,
    );
    expect(result.changes.length).toBeGreaterThanOrEqual(1);
    expect(result.changes[0]!.verified).toBe(true);
  });

  it('answers document_unsupported, not engine_error, for bytes that are not a PDF', async () => {
    const err = await pool
      .edit(
        {
          pdf: Buffer.from('not a pdf'),
          edits: [{ index: 0, op: 'replace', find: 'a', replace: 'b' }],
          options: { font: { policy: 'prefer_exact' }, break_signature: false },
        },
        60_000,
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('document_unsupported');
  });
});

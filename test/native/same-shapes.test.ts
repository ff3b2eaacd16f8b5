import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Native from '../../native/index.js';
import { loadConfig } from '../../src/config.js';
import { PROJECT_ROOT } from '../../src/engine/root.js';
import { corpusPath } from '../helpers/corpus.js';
import { type EditApp, startEditApp } from '../helpers/edit-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const native = createRequire(import.meta.url)(path.join(PROJECT_ROOT, 'native', 'index.js')) as typeof Native;
const INVOICE = 'doc-invoice-itextsharp-demo.pdf';

/** The request of the comparison, as a client writes it for `POST /v1/edit` (no `op` on the replace). */
const EDITS = [
  { find: 'Bayside Wholesale', replace: 'Baysider Wholesale', scope: { occurrence: 'first' } },
  { op: 'insert', text: 'Ltd', at: { after: 'Bayside Wholesale' } },
  { op: 'delete', find: 'No such phrase anywhere' },
] as const;
/** A form edit naming no field of the invoice (it has no form): failed with a reason. The
 * API takes `fields` as an object, the addon as a list of {name, value} (request order). */
const FORM_HTTP = { op: 'form', fields: { 'No such field': 'x' } } as const;
const FORM_NATIVE = { op: 'form', fields: [{ name: 'No such field', value: 'x' }] } as const;
const OPTIONS = { font: { policy: 'prefer_exact' }, break_signature: false, watermark: 'auto' } as const;

/** Each entry's keys, sorted: the shape without the values. */
const keysOf = (list: object[]) => list.map((x) => Object.keys(x).sort());

/**
 * Issue 15 item 6: the addon's `edit` takes the API's request (edits and options as a
 * client writes them) and answers with the API's result shapes; only what the service adds
 * around the engine differs (an output link instead of `pdf`, preview links instead of PNG
 * bytes, usage, status).
 */
describe.skipIf(!HAVE_CORPUS)('the addon and POST /v1/edit: one request, one result shape', () => {
  let t: EditApp;
  beforeAll(async () => {
    native.init(loadConfig({}).pdfiumLibPath);
    t = await startEditApp({ 'invoice.pdf': corpusPath(INVOICE) }, 'shapes');
  });
  afterAll(async () => t?.close());

  it('changes, unmatched, failed and timings have the same members', async () => {
    const pdf = readFileSync(corpusPath(INVOICE));
    const edits = [...EDITS, FORM_NATIVE] as unknown as Native.EditSpec[];
    const direct = native.edit(pdf, { edits, options: OPTIONS });
    const res = await t.edit('invoice.pdf', [...EDITS, FORM_HTTP], OPTIONS);
    expect(res.statusCode, res.body).toBe(200);
    const http = res.json();

    expect(direct.changes.map((c) => c.op)).toEqual(http.changes.map((c: { op: string }) => c.op));
    expect(direct.changes.map((c) => c.op)).toEqual(['replace', 'insert']);
    const previews = new Set(['before_preview_url', 'after_preview_url', 'before_png', 'after_png']);
    const withoutPreviews = (list: object[]) => keysOf(list).map((k) => k.filter((m) => !previews.has(m)));
    // The addon's optional members the API leaves out when they do not apply arrive as
    // undefined: compare what is set.
    const set = (list: object[]) =>
      list.map((x) => Object.fromEntries(Object.entries(x).filter(([, v]) => v !== undefined && v !== null)));
    expect(withoutPreviews(set(direct.changes))).toEqual(withoutPreviews(set(http.changes)));
    expect(direct.changes[1]).toMatchObject({ op: 'insert', text: 'Ltd', edit_index: 1 });
    expect(direct.changes[1]?.find).toBeUndefined();

    expect(direct.unmatched).toEqual(http.unmatched);
    expect(direct.unmatched).toEqual([{ index: 2, op: 'delete', find: 'No such phrase anywhere' }]);
    expect(keysOf(set(direct.failed))).toEqual(keysOf(http.failed));
    expect(direct.failed.map((f) => [f.index, f.reason])).toEqual(
      http.failed.map((f: { index: number; reason: string }) => [f.index, f.reason]),
    );

    expect(Object.keys(direct.timings).sort()).toEqual(
      expect.arrayContaining(Object.keys(http.timings).sort()),
    );
    expect(direct.warnings).toEqual(http.warnings);
  });

  it("refuses OCR's settings without OCR, as the API does", async () => {
    const pdf = readFileSync(corpusPath(INVOICE));
    expect(() =>
      native.edit(pdf, {
        edits: [{ find: 'INV-0046', replace: 'INV-0047' }],
        options: { ocr_languages: ['eng'] },
      }),
    ).toThrow(/options\.ocr_languages: applies only with options\.ocr true/);
    const res = await t.edit('invoice.pdf', [{ find: 'INV-0046', replace: 'INV-0047' }], {
      ocr_languages: ['eng'],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/options\.ocr_languages: applies only with options\.ocr true/);
  });
});

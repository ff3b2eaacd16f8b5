import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpusPath, pdftotextAvailable } from '../helpers/corpus.js';
import { type EditApp, startEditApp } from '../helpers/edit-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';

describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable())('POST /v1/edit op insert', () => {
  let a: EditApp;
  beforeAll(async () => {
    a = await startEditApp({ [INVOICE]: corpusPath(INVOICE) }, 'insert');
  });
  afterAll(async () => {
    await a?.close();
  });

  const edit = (edits: unknown[]) => a.edit(INVOICE, edits);
  const textOfOutput = async (url: string) => a.textOf(await a.download(url)).replace(/\s+/g, ' ');

  it('inserts inline after an anchor in its font, read in order', async () => {
    const res = await edit([{ op: 'insert', text: 'Ltd', at: { after: 'Bayside Wholesale' } }]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.status).toBe('done');
    expect(body.changes[0]).toMatchObject({ op: 'insert', text: 'Ltd', verified: true });
    expect(body.changes[0].font_source).toMatch(/^exact-/);
    expect(await textOfOutput(body.output.url)).toContain('Bayside Wholesale Ltd');
  });

  it('inserts at a point with a size and colour override', async () => {
    const res = await edit([
      { op: 'insert', text: 'PAID', at: { page: 1, x: 60, y: 770 }, style: { size: 14, color: '#CC0000' } },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.status).toBe('done');
    // The invoice is a flagged document: its edited page gets the 'Edited' mark (SPEC rule 12).
    expect(body.warnings).toEqual(['edited_mark']);
    expect(await textOfOutput(body.output.url)).toContain('PAID');
  });

  it('refuses an insert without text or at, or on a page that does not exist', async () => {
    expect((await edit([{ op: 'insert', at: { after: 'INVOICE' } }])).statusCode).toBe(400);
    expect((await edit([{ op: 'insert', text: 'x' }])).statusCode).toBe(400);
    const res = await edit([{ op: 'insert', text: 'x', at: { page: 9, x: 1, y: 1 } }]);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('at.page 9');
  });

  it('lists an anchor that is not there as unmatched', async () => {
    const res = await edit([
      { op: 'insert', text: 'x', at: { after: 'Nowhere to be found', newline: true } },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe('failed');
    expect(res.json().unmatched[0]).toMatchObject({ index: 0, op: 'insert' });
  });
});

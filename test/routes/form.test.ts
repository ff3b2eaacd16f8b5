import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/app.js';
import { corpusPath, pdftotextAvailable } from '../helpers/corpus.js';
import { type EditApp, startEditApp } from '../helpers/edit-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';

/** LibreOffice form: text fields, a radio group, a combo box and checkboxes, NeedAppearances. */
const LIBRE = 'form-libreoffice-writer-needappearances.pdf';
/** Acrobat form with every widget kind and emoji field names. */
const FANCY = 'form-fancy-fields-acrobat-dc.pdf';

/** A one-page form built here: `name` (empty) and `note`, valued in Phoenician (no font draws it) without an appearance. */
const SKIP = 'built-flatten-skipped.pdf';

function skippedFormPdf(): Buffer {
  const widget = '/Type /Annot /Subtype /Widget /F 4 /P 3 0 R /FT /Tx /DA (/Helv 10 Tf 0 g)';
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [4 0 R 5 0 R] /DA (/Helv 0 Tf 0 g) >> >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Annots [4 0 R 5 0 R] /Contents 6 0 R >>',
    `<< ${widget} /T (name) /Rect [100 400 300 420] >>`,
    `<< ${widget} /T (note) /Rect [100 300 300 320] /V <FEFFD802DD00D802DD01> >>`,
    '<< /Length 0 >>\nstream\n\nendstream',
  ];
  let out = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

interface Field {
  name: string;
  type: string;
  value: unknown;
  options?: string[];
  page: number;
  box: number[];
}

describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable())('POST /v1/edit op form', () => {
  let a: EditApp;
  beforeAll(async () => {
    a = await startEditApp(
      { [LIBRE]: corpusPath(LIBRE), [FANCY]: corpusPath(FANCY), [SKIP]: skippedFormPdf() },
      'form',
    );
  });
  afterAll(async () => {
    await a?.close();
  });

  const source = (file: string) => ({ url: a.files.url(file) });
  const edit = (src: unknown, edits: unknown[]) =>
    a.t.app.inject({
      method: 'POST',
      url: '/v1/edit',
      headers: bearer(a.key),
      payload: { source: src, edits },
    });
  const fieldsOf = async (src: unknown): Promise<Field[]> => {
    const res = await a.t.app.inject({
      method: 'POST',
      url: '/v1/text',
      headers: bearer(a.key),
      payload: { source: src, layers: ['forms'] },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().fields;
  };
  const download = (url: string) => a.download(url);
  const textOf = (pdf: Buffer) => a.textOf(pdf);

  it('lists every field with its type, options and box', async () => {
    const fields = await fieldsOf(source(FANCY));
    const byName = new Map(fields.map((f) => [f.name, f]));
    expect(byName.get('First Name 🚀')).toMatchObject({ type: 'text', value: 'Cedar', page: 1 });
    const radio = byName.get('Historical Figures 🐺');
    expect(radio?.type).toBe('radio');
    expect(radio?.options?.length).toBe(4);
    expect(radio?.options).toContain(radio?.value);
    expect(byName.get('Which Are Planets? 🌎')?.options).toEqual(['Earth', 'Mars', 'Pluto', 'Neptune']);
    expect(byName.get('Choose A Gundam 🤖')?.type).toBe('combo');
    expect(byName.get('Eject 📼')?.type).toBe('button');
    for (const f of fields) expect(f.box[2]).toBeGreaterThan(f.box[0] ?? 0);
  });

  it('fills text (accented and Greek), checkbox, radio and combo, and reads them back', async () => {
    const values = {
      'Last Name': 'Müller-Lüdenscheidt',
      'First Name': 'Ελένη',
      Birthday: 19700101,
      gdpr: true,
      female: 'Off',
      Nationality: 'French',
    };
    const res = await edit(source(LIBRE), [{ op: 'form', fields: values }]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.status, JSON.stringify(body.failed)).toBe('done');
    const changed = new Map(body.changes.map((c: { field: string }) => [c.field, c]));
    expect(changed.get('Last Name')).toMatchObject({
      op: 'form',
      value: 'Müller-Lüdenscheidt',
      verified: true,
    });
    expect(changed.get('Birthday')).toMatchObject({ value: '19700101' });
    expect(changed.get('gdpr')).toMatchObject({ value: true, font_source: 'none' });
    // Greek is not in the form's WinAnsi font: a real font carries it, never tofu.
    expect(['metric-twin', 'look-alike', 'exact-embedded']).toContain(
      (changed.get('First Name') as { font_source: string }).font_source,
    );
    const back = new Map((await fieldsOf({ file_id: body.output.file_id })).map((f) => [f.name, f.value]));
    expect(back.get('Last Name')).toBe('Müller-Lüdenscheidt');
    expect(back.get('First Name')).toBe('Ελένη');
    expect(back.get('Birthday')).toBe('19700101');
    expect(back.get('gdpr')).toBe(true);
    expect(back.get('Nationality')).toBe('French');
  });

  it('replaces text the user sees in a filled field: the field is rewritten and read back', async () => {
    // Found by a span of /v1/text, as a client would: the form-field span that shows "Cedar".
    const text = await a.t.app.inject({
      method: 'POST',
      url: '/v1/text',
      headers: bearer(a.key),
      payload: { source: source(FANCY) },
    });
    expect(text.statusCode, text.body).toBe(200);
    const spans = (text.json().pages[0].spans as { span_id: string; text: string; source: string }[]).filter(
      (s) => s.source === 'form-field' && s.text.includes('Cedar'),
    );
    expect(spans.length).toBe(1);
    const res = await edit(source(FANCY), [
      { op: 'replace', find: 'Cedar', replace: 'Birch', scope: { span_ids: [spans[0]!.span_id] } },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.status, JSON.stringify(body.failed)).toBe('done');
    expect(body.changes).toEqual([
      expect.objectContaining({ op: 'replace', field: 'First Name 🚀', value: 'Birch', verified: true }),
    ]);
    const back = new Map((await fieldsOf({ file_id: body.output.file_id })).map((f) => [f.name, f.value]));
    expect(back.get('First Name 🚀')).toBe('Birch');
  });

  it('flattens: the values are page text and no field is left', async () => {
    const res = await edit(source(LIBRE), [
      { op: 'form', fields: { 'Last Name': 'Müller', 'First Name': 'Ελένη', gdpr: true }, flatten: true },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.status).toBe('done');
    const text = textOf(await download(body.output.url));
    expect(text).toContain('Müller');
    expect(text).toContain('Ελένη');
    expect(text).toContain('Bob'); // a value set before, without an appearance, is burnt in too
    expect(await fieldsOf({ file_id: body.output.file_id })).toEqual([]);
    expect(body.flatten_skipped).toBeUndefined();
  });

  it('flatten_skipped names the fields left live', async () => {
    const res = await edit(source(SKIP), [{ op: 'form', fields: { name: 'Ada' }, flatten: true }]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.warnings).toContain('flatten_skipped');
    expect(body.flatten_skipped).toEqual(['note']);
    expect(textOf(await download(body.output.url))).toContain('Ada');
    const left = await fieldsOf({ file_id: body.output.file_id });
    expect(left.map((f) => f.name)).toEqual(['note']);
  });

  it('lists unknown names and refused values in failed[] and applies the rest', async () => {
    const res = await edit(source(LIBRE), [
      { op: 'form', fields: { 'No Such Field': 'x', Nationality: 'Martian', 'Last Name': 'Kept' } },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.status).toBe('partial');
    const reasons = Object.fromEntries(
      body.failed.map((f: { field: string; reason: string }) => [f.field, f.reason]),
    );
    expect(reasons).toEqual({ 'No Such Field': 'field_not_found', Nationality: 'value_not_accepted' });
    expect(body.changes.map((c: { field: string }) => c.field)).toEqual(['Last Name']);
  });

  it('answers 422 edit_failed when no field could be filled', async () => {
    const res = await edit(source(LIBRE), [{ op: 'form', fields: { Nope: 'x' } }]);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().error.code).toBe('edit_failed');
    expect(res.json().failed[0]).toMatchObject({ reason: 'field_not_found', field: 'Nope' });
  });

  it('refuses a form edit without fields, and members that do not apply', async () => {
    const empty = await edit(source(LIBRE), [{ op: 'form', fields: {} }]);
    expect(empty.statusCode).toBe(400);
    const stray = await edit(source(LIBRE), [{ op: 'form', fields: { a: 'b' }, find: 'x' }]);
    expect(stray.statusCode).toBe(400);
    expect(stray.json().error.message).toContain('"find"');
  });
});

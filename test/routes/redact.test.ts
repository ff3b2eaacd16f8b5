import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpusPath, pdftotext, pdftotextAvailable } from '../helpers/corpus.js';
import { type EditApp, startEditApp } from '../helpers/edit-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const TRIVIAL = 'font-tt-subset-libreoffice-trivial.pdf';
const OCR_SCAN = 'scan-ocr-layer-brother-de.pdf';
/** A scan without a text layer: its words are only pixels. */
const BARE_SCAN = 'scan-jbig2-xerox-rot270.pdf';

function words(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const w of text.match(/[A-Za-z]{5,12}/g) ?? []) out.set(w, (out.get(w) ?? 0) + 1);
  return out;
}

describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable())('POST /v1/edit op redact', () => {
  let a: EditApp;
  beforeAll(async () => {
    a = await startEditApp(
      {
        'trivial.pdf': corpusPath(TRIVIAL),
        'ocr.pdf': corpusPath(OCR_SCAN),
        'scan.pdf': corpusPath(BARE_SCAN),
      },
      'redact',
    );
  });
  afterAll(async () => {
    await a?.close();
  });

  const edit = (file: string, edits: unknown[], headers: Record<string, string> = {}) =>
    a.edit(file, edits, undefined, headers);
  const download = (url: string) => a.download(url);
  const textOf = (pdf: Buffer) => a.textOf(pdf).replace(/\s+/g, ' ');

  it('removes the phrase for real, keeps every other word, reports nothing left', async () => {
    const phrase = 'takimata sanctus est';
    const res = await edit('trivial.pdf', [{ op: 'redact', find: phrase }]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.status).toBe('done');
    expect(body.changes.length).toBeGreaterThanOrEqual(1);
    for (const c of body.changes) {
      expect(c).toMatchObject({ op: 'redact', find: phrase, verified: true, font_source: 'none' });
      expect(c.replace).toBeUndefined();
    }
    expect(body.residual).toEqual([]);
    expect(Array.isArray(body.removed)).toBe(true);
    const out = await download(body.output.url);
    const after = textOf(out);
    expect(after).not.toContain(phrase);
    // One revision only: a full rewrite, no earlier text left behind.
    expect(out.toString('latin1').match(/%%EOF/g)?.length).toBe(1);
    const original = words(pdftotext(corpusPath(TRIVIAL)));
    const kept = words(after);
    for (const w of phrase.match(/[A-Za-z]{5,12}/g) ?? [])
      original.set(w, (original.get(w) ?? 0) - body.changes.length);
    for (const [w, n] of original) expect(kept.get(w) ?? 0, w).toBeGreaterThanOrEqual(n);
  });

  it('returns the redacted PDF itself with Accept: application/pdf', async () => {
    const res = await edit('trivial.pdf', [{ op: 'redact', find: 'takimata' }], {
      accept: 'application/pdf',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toContain('application/pdf');
    expect(textOf(res.rawPayload)).not.toContain('takimata');
  });

  it('redacts a word of an OCR layer over a scan (the glyphs and the image pixels under them)', async () => {
    const res = await edit('ocr.pdf', [{ op: 'redact', find: 'Testdokument' }]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.changes.length).toBeGreaterThanOrEqual(1);
    for (const c of body.changes) expect(c).toMatchObject({ op: 'redact', verified: true });
    expect(body.removed).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'image' })]));
    expect(textOf(await download(body.output.url))).not.toContain('Testdokument');
  });

  it('refuses a word that is only pixels of a scan (scanned_text), 422 when nothing applied', async () => {
    const res = await edit('scan.pdf', [{ op: 'redact', find: 'Doesn' }]);
    expect(res.statusCode, res.body).toBe(422);
    const body = res.json();
    expect(body.error.code).toBe('edit_failed');
    expect(body.failed).toEqual([
      expect.objectContaining({ index: 0, op: 'redact', reason: 'scanned_text' }),
    ]);
  });

  it('refuses members that do not apply to redact', async () => {
    const res = await edit('trivial.pdf', [{ op: 'redact', find: 'takimata', replace: 'x' }]);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('"replace" does not apply to op "redact"');
  });
});

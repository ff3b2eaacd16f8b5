import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/app.js';
import { corpusPath, pdftotextAvailable } from '../helpers/corpus.js';
import { type EditApp, startEditApp } from '../helpers/edit-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ');
}

describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable())('POST /v1/edit', () => {
  let a: EditApp;
  beforeAll(async () => {
    a = await startEditApp(
      {
        [INVOICE]: corpusPath(INVOICE),
        'signed.pdf': corpusPath('sig-libreoffice-okular-visible.pdf'),
        'trivial.pdf': corpusPath('font-tt-subset-libreoffice-trivial.pdf'),
      },
      'edit',
    );
  });
  afterAll(async () => {
    await a?.close();
  });

  const edit = (file: string, edits: unknown[], options?: unknown, headers: Record<string, string> = {}) =>
    a.edit(file, edits, options, headers);
  const download = (url: string) => a.download(url);
  const textOf = (pdf: Buffer) => collapse(a.textOf(pdf));

  it('replaces a phrase in the document font, verified, with a downloadable output', async () => {
    const res = await edit(INVOICE, [{ find: 'Bayside Wholesale', replace: 'Baysider Wholesale' }]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.status).toBe('done');
    expect(body.changes.length).toBeGreaterThanOrEqual(1);
    for (const c of body.changes) {
      expect(c).toMatchObject({ op: 'replace', find: 'Bayside Wholesale', verified: true });
      expect(['exact-embedded', 'exact-declared', 'metric-twin']).toContain(c.font_source);
      expect(c.before_preview_url).toMatch(/^http:\/\/127\.0\.0\.1:8080\/v1\/files\//);
    }
    expect(body.usage.pages_billed).toBe(1);
    const out = await download(body.output.url);
    const text = textOf(out);
    expect(text).toContain('Baysider Wholesale');
    expect(text).not.toContain('Bayside Wholesale');
    expect(text).toContain('Amount Due');
    const before = await download(body.changes[0].before_preview_url);
    expect(before.subarray(1, 4).toString()).toBe('PNG');
  });

  it("reports each replaced line's alignment: the flush-right total and the left-aligned amount due", async () => {
    const res = await edit(INVOICE, [{ find: '273.13', replace: '1,273.13', scope: { pages: [1] } }]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const kept = body.changes.map((c: { alignment?: string }) => c.alignment).sort();
    expect(kept).toEqual(['left', 'right']);
  });

  it('returns the PDF itself with Accept: application/pdf', async () => {
    const res = await edit(INVOICE, [{ find: 'INV-0046', replace: 'INV-0064' }], undefined, {
      accept: 'application/pdf',
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    expect(textOf(res.rawPayload)).toContain('INV-0064');
  });

  it('lists text that is not found in unmatched[] and bills nothing for it', async () => {
    const res = await edit(INVOICE, [
      { find: 'Amount Due', replace: 'Amount Owed' },
      { find: 'no such words here', replace: 'x' },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.status).toBe('partial');
    expect(body.unmatched).toEqual([{ index: 1, op: 'replace', find: 'no such words here' }]);
    const none = await edit(INVOICE, [{ find: 'no such words here', replace: 'x' }]);
    expect(none.statusCode).toBe(200);
    expect(none.json()).toMatchObject({
      status: 'failed',
      changes: [],
      output: null,
      usage: { pages_billed: 0 },
    });
  });

  it('deletes a phrase without leaving a double space', async () => {
    const res = await edit('trivial.pdf', [{ op: 'delete', find: 'dolor ' }]);
    expect(res.statusCode, res.body).toBe(200);
    const text = textOf(await download(res.json().output.url));
    expect(text).toContain('Lorem ipsum sit amet');
    expect(text).not.toMatch(/ {2}/);
  });

  it('rolls back an edit that collides with its neighbour (fit none) with 422 edit_failed', async () => {
    const res = await edit(INVOICE, [
      { find: 'Invoice Date', replace: 'Invoice Date of this very long replacement text', fit: 'none' },
    ]);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().error.code).toBe('edit_failed');
    expect(res.json().failed[0]).toMatchObject({ index: 0, reason: 'collateral_change' });
  });

  it('refuses a signed document unless break_signature is set', async () => {
    const res = await edit('signed.pdf', [{ find: 'Hello', replace: 'Howdy' }]);
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('signed_document');
  });

  it('appends the edit of a signed document after its signed bytes with break_signature', async () => {
    const res = await edit('signed.pdf', [{ find: 'here', replace: 'there' }], { break_signature: true });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.changes).toHaveLength(1);
    // Signed, so flagged and marked; the mark is in the update too.
    expect(body.warnings).toContain('edited_mark');
    const original = readFileSync(corpusPath('sig-libreoffice-okular-visible.pdf'));
    const out = await download(body.output.url);
    expect(out.length).toBeGreaterThan(original.length);
    expect(out.subarray(0, original.length).equals(original)).toBe(true);
    expect(textOf(out)).toContain('there');
    let pdfsig: string | undefined;
    try {
      pdfsig = execFileSync('pdfsig', [a.save(out)]).toString();
    } catch {
      pdfsig = undefined; // poppler-utils without pdfsig: the byte check above stands
    }
    if (pdfsig !== undefined) {
      expect(pdfsig).toContain('Signature is Valid.');
      expect(pdfsig).not.toContain('Total document signed');
    }
  });

  it('accepts the multipart form and refuses other fields', async () => {
    const boundary = '----pdfedit-test';
    const pdf = readFileSync(corpusPath(INVOICE));
    const part = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const body = (extra = '') =>
      Buffer.concat([
        Buffer.from(
          `${part('edits', JSON.stringify([{ find: 'Amount Due', replace: 'Amount Owed' }]))}${extra}--${boundary}\r\n` +
            'Content-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n',
        ),
        pdf,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
    const headers = { ...bearer(a.key), 'content-type': `multipart/form-data; boundary=${boundary}` };
    const ok = await a.t.app.inject({ method: 'POST', url: '/v1/edit', headers, payload: body() });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().status).toBe('done');
    const bad = await a.t.app.inject({
      method: 'POST',
      url: '/v1/edit',
      headers,
      payload: body(part('colour', 'red')),
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toContain('colour');
  });

  it('refuses unknown members and members that do not fit the op, naming them', async () => {
    const typo = await edit(INVOICE, [{ find: 'Amount Due', replce: 'x' }]);
    expect(typo.statusCode).toBe(400);
    expect(typo.json().error.message).toContain('replce');
    const wrong = await edit(INVOICE, [{ op: 'delete', find: 'Amount Due', text: 'x' }]);
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error.message).toContain('"text"');
  });

  it('checks the output with qpdf', async () => {
    const res = await edit(INVOICE, [{ find: 'Amount Due', replace: 'Amount Owed' }]);
    const file = path.join(a.tmp, 'qpdf.pdf');
    writeFileSync(file, await download(res.json().output.url));
    execFileSync('qpdf', ['--check', file], { stdio: 'pipe' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, startApp, type TestApp } from '../helpers/app.js';

/**
 * Typed answers for malformed input at the request layer (issue 21 item 4): a broken
 * multipart body, a part the form does not take, JSON that is not UTF-8. None of these
 * reaches the engine; each is a 400 invalid_request that says what is wrong.
 */

const BOUNDARY = 'pdfeditBoundary7MA4YWxk';
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');

type Part = { name: string; value: string | Buffer; filename?: string };

function multipart(parts: Part[], boundary = BOUNDARY): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}`;
    const type = p.filename ? 'Content-Type: application/pdf\r\n' : '';
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`));
    chunks.push(Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

const EDITS = JSON.stringify([{ find: 'a', replace: 'b' }]);
const valid = (): Part[] => [
  { name: 'file', value: PDF, filename: 'doc.pdf' },
  { name: 'edits', value: EDITS },
];

describe('the request layer', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startApp('sqlite', { RATE_LIMIT_FACTOR: '100' });
    key = await t.newKey('request-layer@example.com');
  });
  afterAll(async () => t?.close());

  const edit = (payload: Buffer | string, contentType: string) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/edit',
      headers: { ...bearer(key), 'content-type': contentType },
      payload,
    });
  const form = (payload: Buffer) => edit(payload, `multipart/form-data; boundary=${BOUNDARY}`);

  function expect400(res: { statusCode: number; body: string; json(): { error: Record<string, string> } }) {
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
    return res.json().error.message;
  }

  it('answers 400 for a truncated multipart body', async () => {
    const whole = multipart(valid());
    for (const cut of [whole.length - 10, Math.floor(whole.length / 2), 20]) {
      const message = expect400(await form(whole.subarray(0, cut)));
      expect(message).toMatch(/malformed or truncated|needs a "file"|needs an "edits"/);
    }
  });

  it('answers 400 for a multipart body without a boundary, or with another one', async () => {
    expect(expect400(await edit(multipart(valid()), 'multipart/form-data'))).toMatch(
      /malformed or truncated/,
    );
    expect(expect400(await form(multipart(valid(), 'otherBoundary')))).toMatch(
      /malformed or truncated|needs/,
    );
    expect(expect400(await form(Buffer.from('garbage, not a form')))).toMatch(/malformed or truncated|needs/);
  });

  it('names an unknown, a repeated or a misplaced part (never 413)', async () => {
    const extra = expect400(
      await form(
        multipart([
          ...valid(),
          { name: 'options', value: '{}' },
          { name: 'password', value: 'x' },
          { name: 'colour', value: 'red' },
        ]),
      ),
    );
    expect(extra).toContain('"colour"');
    const secondFile = expect400(
      await form(multipart([...valid(), { name: 'file', value: PDF, filename: 'again.pdf' }])),
    );
    expect(secondFile).toMatch(/"file" is given more than once/);
    const secondEdits = expect400(await form(multipart([...valid(), { name: 'edits', value: EDITS }])));
    expect(secondEdits).toMatch(/"edits" is given more than once/);
    const otherFile = expect400(
      await form(multipart([...valid(), { name: 'attachment', value: PDF, filename: 'x.pdf' }])),
    );
    expect(otherFile).toContain('"attachment"');
    const fileAsText = expect400(
      await form(
        multipart([
          { name: 'file', value: 'not a file' },
          { name: 'edits', value: EDITS },
        ]),
      ),
    );
    expect(fileAsText).toMatch(/"file" must be a file upload/);
  });

  it('refuses JSON that is not UTF-8, and a charset other than UTF-8', async () => {
    const body = Buffer.concat([
      Buffer.from('{"source":{"url":"https://example.com/a.pdf"},"edits":[{"find":"caf'),
      Buffer.from([0xe9]), // Latin-1 é: not UTF-8
      Buffer.from('","replace":"x"}]}'),
    ]);
    expect(expect400(await edit(body, 'application/json'))).toMatch(/not valid UTF-8/);
    const latin1 = expect400(
      await edit('{"source":{"file_id":"file_x"},"edits":[]}', 'application/json; charset=iso-8859-1'),
    );
    expect(latin1).toMatch(/charset "iso-8859-1"/);
    // The same request in UTF-8 (with or without the charset, or a BOM) reaches validation.
    const ok = Buffer.from('{"source":{"file_id":"file_x"},"edits":[{"find":"café","replace":"x"}]}');
    for (const [payload, type] of [
      [ok, 'application/json'],
      [ok, 'application/json; charset="UTF-8"'],
      [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), ok]), 'application/json'],
    ] as const) {
      const res = await edit(payload, type);
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
  });

  it('refuses invalid UTF-8 on the other JSON routes too', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/text',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      payload: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
    });
    expect(expect400(res)).toMatch(/not valid UTF-8/);
    const files = await t.app.inject({
      method: 'POST',
      url: '/v1/files',
      headers: { ...bearer(key), 'content-type': 'application/json; charset=utf-16' },
      payload: '{}',
    });
    expect(expect400(files)).toMatch(/charset "utf-16"/);
  });

  it('keeps JSON types as sent: a boolean is not turned into a string, nor a string into a number', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/preview',
      headers: bearer(key),
      payload: { source: { file_id: 'file_x' }, page: '2' },
    });
    expect(expect400(res)).toMatch(/page/);
  });
});

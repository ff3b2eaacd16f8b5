import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EditTask } from '../../src/engine/tasks.js';
import { bearer } from '../helpers/app.js';
import { corpusPath } from '../helpers/corpus.js';
import { type EditApp, startEditApp } from '../helpers/edit-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';

// Issue 18: a document uploaded once and edited again and again (`source.file_id`) reuses
// its engine process's renders of the unedited page (options.template_cache); a document
// sent in the request does not. Either way the output is the same, byte for byte.
describe.skipIf(!HAVE_CORPUS)('sync edit of a stored document: template cache', () => {
  let a: EditApp;
  beforeAll(async () => {
    a = await startEditApp({ 'invoice.pdf': corpusPath(INVOICE) }, 'stored-cache');
  });
  afterAll(async () => {
    await a?.close();
  });

  async function upload(bytes: Buffer): Promise<string> {
    const res = await a.t.app.inject({ method: 'POST', url: '/v1/files', headers: bearer(a.key) });
    const r = res.json() as { file_id: string; upload_url: string; headers: Record<string, string> };
    const put = await a.t.app.inject({
      method: 'PUT',
      url: r.upload_url.replace(a.t.env.config.publicBaseUrl, ''),
      headers: r.headers,
      payload: bytes,
    });
    expect(put.statusCode, put.body).toBe(204);
    return r.file_id;
  }

  const edits = [{ find: 'INV-0046', replace: 'INV-0064' }];

  async function outputOf(res: { statusCode: number; body: string; json(): unknown }): Promise<Buffer> {
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { status: string; output: { url: string } };
    expect(body.status).toBe('done');
    return a.download(body.output.url);
  }

  it('asks the engine for the cache with file_id only, and answers the same bytes', async () => {
    const fileId = await upload(readFileSync(corpusPath(INVOICE)));
    const spy = vi.spyOn(a.t.app.engine, 'edit');
    try {
      // A key of its own per call: the same body without one would be replayed.
      const byFile = (key: string) =>
        a.t.app.inject({
          method: 'POST',
          url: '/v1/edit',
          headers: { ...bearer(a.key), 'idempotency-key': key },
          payload: { source: { file_id: fileId }, edits },
        });
      const first = await outputOf(await byFile('first'));
      const again = await outputOf(await byFile('again'));
      const inRequest = await outputOf(await a.edit('invoice.pdf', edits));
      const asked = spy.mock.calls.map(([task]) => (task as Omit<EditTask, 'op'>).options?.template_cache);
      expect(asked).toEqual([true, true, undefined]);
      expect(again.equals(first)).toBe(true);
      expect(inRequest.equals(first)).toBe(true);
      expect(a.textOf(again)).toContain('INV-0064');
    } finally {
      spy.mockRestore();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpiredFiles } from '../../src/domain/files.js';
import { signFileToken } from '../../src/net/tokens.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import { DB_KINDS } from '../helpers/env.js';

const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\n%%EOF\n');
const PUBLIC = 'http://127.0.0.1:8080';

describe.each(DB_KINDS)('retention with a controllable clock on %s', (kind) => {
  let t: TestApp;
  const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

  beforeAll(async () => {
    t = await startApp(kind);
    t.app.config.now = () => T0;
  });
  afterAll(async () => t?.close());

  it('serves a file until expires_at and not a second after; the sweep frees the blob', async () => {
    const key = await t.newKey('ret@example.com');
    const res = await t.app.inject({ method: 'POST', url: '/v1/files', headers: bearer(key) });
    const r = res.json() as { file_id: string; upload_url: string; expires_at: string };
    const expiresAt = Date.parse(r.expires_at);
    expect(expiresAt).toBe(T0 + 24 * 3600_000);
    const put = await t.app.inject({
      method: 'PUT',
      url: r.upload_url.slice(PUBLIC.length),
      headers: { 'content-type': 'application/pdf' },
      payload: PDF,
    });
    expect(put.statusCode).toBe(204);
    // A download link that outlives the file, so the file's own expiry is what is tested.
    const token = signFileToken(t.app.config.tokenSecret, r.file_id, 'get', expiresAt + 3600_000);
    const get = () => t.app.inject({ method: 'GET', url: `/v1/files/${r.file_id}/content?token=${token}` });

    t.app.config.now = () => expiresAt - 1000;
    expect((await get()).statusCode).toBe(200);
    expect(await sweepExpiredFiles(t.app.db, t.app.blobs, t.app.config.now())).toBe(0);

    t.app.config.now = () => expiresAt + 1000;
    expect((await get()).statusCode).toBe(404);
    // The upload's own link has expired too.
    const own = await t.app.inject({
      method: 'PUT',
      url: r.upload_url.slice(PUBLIC.length),
      headers: { 'content-type': 'application/pdf' },
      payload: PDF,
    });
    expect(own.statusCode).toBe(401);
    expect(await sweepExpiredFiles(t.app.db, t.app.blobs, t.app.config.now())).toBe(1);
    t.app.config.now = () => expiresAt - 1000;
    expect((await get()).statusCode).toBe(404);
  });
});

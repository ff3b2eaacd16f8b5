import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverOptions } from '../../src/app.js';
import { ensureAccount } from '../../src/domain/accounts.js';
import { createKey } from '../../src/domain/api-keys.js';
import { markStored, reserveFile } from '../../src/domain/files.js';
import { signFileToken } from '../../src/net/tokens.js';
import auth from '../../src/plugins/app/auth.js';
import db from '../../src/plugins/app/db.js';
import errors from '../../src/plugins/app/errors.js';
import requestId from '../../src/plugins/app/request-id.js';
import schemas from '../../src/plugins/app/schemas.js';
import files from '../../src/routes/files.js';
import type { S3BlobStore } from '../../src/store/blobs-s3.js';
import type { FilesSchema } from '../../src/store/files-schema.js';
import { DB_KINDS, makeTestEnv, type TestEnv } from '../helpers/env.js';
import { HAVE_MOTO, type Moto, startMoto } from '../helpers/moto.js';

const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

const PUBLIC = 'https://files.example.test';
const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\n%%EOF\n');
const MB = 1024 * 1024;

// The two deployments of the acceptance criteria: SQLite + disk, PostgreSQL + S3 + Redis
// (S3 is moto_server on loopback, installed into vendor/venv by scripts/setup.sh).
const DEPLOYMENTS = [
  ...DB_KINDS.map((kind) => ({ kind, store: 'disk' as const })),
  ...(HAVE_MOTO ? [{ kind: 'postgres' as const, store: 's3' as const }] : []),
];

describe.each(DEPLOYMENTS)('/v1/files on $kind with $store blobs', ({ kind, store }) => {
  let env: TestEnv;
  let moto: Moto | undefined;
  let app: FastifyInstance;
  let keyA: string;
  let keyATest: string;
  let keyB: string;
  let accountA: string;

  beforeAll(async () => {
    let extra: Record<string, string> = {};
    if (store === 's3') {
      moto = await startMoto();
      extra = {
        ...(await moto.env()),
        REDIS_URL,
        RATE_LIMIT_PREFIX: `pdfedit-test:${randomBytes(6).toString('hex')}:`,
      };
    }
    env = await makeTestEnv(kind, { PUBLIC_BASE_URL: PUBLIC, ...extra });
    // The service's validation settings (unknown members refused, bodies not coerced).
    const { ajv, schemaController } = serverOptions(env.config);
    app = Fastify({ ajv, schemaController });
    app.decorate('config', env.config);
    await app.register(requestId);
    await app.register(errors);
    await app.register(schemas);
    await app.register(db);
    await app.register(auth);
    await app.register(files);
    await app.ready();
    const a = await ensureAccount(app.db, 'a@example.com', 'free');
    accountA = a.id;
    keyA = (await createKey(app.db, a.id, 'live')).key;
    keyATest = (await createKey(app.db, a.id, 'test')).key;
    const b = await ensureAccount(app.db, 'b@example.com', 'free');
    keyB = (await createKey(app.db, b.id, 'live')).key;
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
    await moto?.stop();
  });

  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const blobNames = async () => {
    if (store === 'disk') return readdirSync(path.join(env.config.dataDir, 'blobs')).sort();
    const listed = await (app.blobs as S3BlobStore).client.send(
      new ListObjectsV2Command({ Bucket: env.config.s3!.bucket }),
    );
    return (listed.Contents ?? []).map((o) => o.Key!).sort();
  };
  const pathOf = (url: string) => url.slice(PUBLIC.length);

  async function reserve(key = keyA) {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/files',
      headers: { ...bearer(key), host: 'evil.example' },
    });
    expect(res.statusCode).toBe(200);
    return res.json() as {
      file_id: string;
      upload_url: string;
      headers: Record<string, string>;
      expires_at: string;
    };
  }

  async function upload(body: Buffer | Readable = PDF, key = keyA) {
    const r = await reserve(key);
    const put = await app.inject({
      method: 'PUT',
      url: pathOf(r.upload_url),
      headers: r.headers,
      payload: body,
    });
    return { ...r, put };
  }

  const download = (
    id: string,
    token = signFileToken(env.config.tokenSecret, id, 'get', Date.now() + 60_000),
  ) => app.inject({ method: 'GET', url: `/v1/files/${id}/content?token=${encodeURIComponent(token)}` });

  it('reserves with links on PUBLIC_BASE_URL whatever the Host header says', async () => {
    const r = await reserve();
    expect(r.file_id).toMatch(/^file_[0-9A-Za-z]{22}$/);
    expect(r.upload_url.startsWith(`${PUBLIC}/v1/files/${r.file_id}/content?token=`)).toBe(true);
    expect(r.headers).toEqual({ 'Content-Type': 'application/pdf' });
    expect(r.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Date.parse(r.expires_at)).toBeGreaterThan(Date.now() + 23 * 3600_000);
  });

  it('accepts an empty body or {} and names an unknown member', async () => {
    const json = { ...bearer(keyA), 'content-type': 'application/json' };
    expect(
      (await app.inject({ method: 'POST', url: '/v1/files', headers: json, payload: '' })).statusCode,
    ).toBe(200);
    expect(
      (await app.inject({ method: 'POST', url: '/v1/files', headers: json, payload: '{}' })).statusCode,
    ).toBe(200);
    const bad = await app.inject({
      method: 'POST',
      url: '/v1/files',
      headers: json,
      payload: '{"name":"x"}',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('"name"'),
    });
    expect((await app.inject({ method: 'POST', url: '/v1/files' })).statusCode).toBe(401);
  });

  it('stores an upload and serves the same bytes; a second PUT is refused', async () => {
    const { file_id, upload_url, headers, put } = await upload();
    expect(put.statusCode).toBe(204);
    const res = await download(file_id);
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(PDF)).toBe(true);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-length']).toBe(String(PDF.length));
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${file_id}.pdf"`);
    const again = await app.inject({ method: 'PUT', url: pathOf(upload_url), headers, payload: PDF });
    expect(again.statusCode).toBe(400);
    expect(again.json().error.message).toMatch(/immutable/);
  });

  it('refuses an upload over the plan limit, by Content-Length and while streaming, storing nothing', async () => {
    const before = await blobNames();
    const r = await reserve();
    const declared = await app.inject({
      method: 'PUT',
      url: pathOf(r.upload_url),
      headers: { ...r.headers, 'content-length': String(21 * MB) },
      payload: PDF,
    });
    expect(declared.statusCode).toBe(413);
    expect(declared.json().error.code).toBe('too_large');
    // No Content-Length: 21 MB in 1 MB chunks against the free plan's 20 MB.
    const chunks = Readable.from(
      (function* () {
        for (let i = 0; i < 21; i++) yield Buffer.alloc(MB, 0x25);
      })(),
    );
    const streamed = await app.inject({
      method: 'PUT',
      url: pathOf(r.upload_url),
      headers: r.headers,
      payload: chunks,
    });
    expect(streamed.statusCode).toBe(413);
    expect(await blobNames()).toEqual(before);
    expect((await download(r.file_id)).statusCode).toBe(404);
  });

  it('answers an oversized upload over a real socket with 413 and closes the connection', async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const r = await reserve();
    const chunks = Readable.from(
      (function* () {
        for (let i = 0; i < 40; i++) yield Buffer.alloc(MB, 0x25);
      })(),
    );
    const res = await request(origin + pathOf(r.upload_url), {
      method: 'PUT',
      headers: r.headers,
      body: chunks,
    });
    expect(res.statusCode).toBe(413);
    expect(res.headers.connection).toBe('close');
    expect(((await res.body.json()) as { error: { code: string } }).error.code).toBe('too_large');
  });

  it('answers 400 without a token and 401 for tampered, expired, wrong-direction or other-file tokens', async () => {
    const { file_id, upload_url } = await upload();
    const other = await upload();
    const secret = env.config.tokenSecret;
    expect((await app.inject({ method: 'GET', url: `/v1/files/${file_id}/content` })).statusCode).toBe(400);
    const good = signFileToken(secret, file_id, 'get', Date.now() + 60_000);
    const tampered = `${good.slice(0, -2)}${good.endsWith('AA') ? 'BB' : 'AA'}`;
    const expired = signFileToken(secret, file_id, 'get', Date.now() - 1000);
    const putToken = new URL(upload_url).searchParams.get('token')!;
    const otherFile = signFileToken(secret, other.file_id, 'get', Date.now() + 60_000);
    for (const token of [tampered, expired, putToken, otherFile, 'junk']) {
      const res = await download(file_id, token);
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('unauthorized');
    }
    // A download token cannot upload.
    const put = await app.inject({
      method: 'PUT',
      url: `/v1/files/${file_id}/content?token=${good}`,
      headers: { 'content-type': 'application/pdf' },
      payload: PDF,
    });
    expect(put.statusCode).toBe(401);
    expect((await download('file_unknown')).statusCode).toBe(404);
  });

  it('hides files from other accounts and the other key mode', async () => {
    const { file_id } = await upload();
    for (const key of [keyB, keyATest]) {
      const res = await app.inject({ method: 'DELETE', url: `/v1/files/${file_id}`, headers: bearer(key) });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    expect((await download(file_id)).statusCode).toBe(200);
  });

  it('deletes a file with its derived outputs and previews and their blobs', async () => {
    const before = await blobNames();
    const { file_id } = await upload();
    const owner = { accountId: accountA, mode: 'live' as const };
    const child = await reserveFile(app.db, owner, {
      kind: 'preview',
      contentType: 'image/png',
      maxBytes: MB,
      ttlMs: 60_000,
      parentId: file_id,
    });
    const png = Buffer.from('\x89PNG\r\n\x1a\n');
    const stored = await app.blobs.put(`${child.id}-x`, png, { maxBytes: MB });
    expect(await markStored(app.db, child.id, { blobKey: `${child.id}-x`, ...stored })).toBe(true);
    const preview = await download(child.id);
    expect(preview.headers['content-type']).toBe('image/png');
    expect(preview.headers['content-disposition']).toMatch(/^inline/);
    expect((await blobNames()).length).toBe(before.length + 2);

    const del = await app.inject({ method: 'DELETE', url: `/v1/files/${file_id}`, headers: bearer(keyA) });
    expect(del.statusCode).toBe(204);
    expect(await blobNames()).toEqual(before);
    expect((await download(file_id)).statusCode).toBe(404);
    expect((await download(child.id)).statusCode).toBe(404);
    const again = await app.inject({ method: 'DELETE', url: `/v1/files/${file_id}`, headers: bearer(keyA) });
    expect(again.statusCode).toBe(404);
  });

  it('treats an expired file as gone', async () => {
    const { file_id } = await upload();
    await app.db
      .withTables<FilesSchema>()
      .updateTable('files')
      .set({ expires_at: Date.now() - 1 })
      .where('id', '=', file_id)
      .execute();
    expect((await download(file_id)).statusCode).toBe(404);
    const del = await app.inject({ method: 'DELETE', url: `/v1/files/${file_id}`, headers: bearer(keyA) });
    expect(del.statusCode).toBe(404);
  });
});

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markStored, reserveFile } from '../../src/domain/files.js';
import { resolveSource, type SourceInput } from '../../src/domain/source.js';
import { ApiError } from '../../src/kernel/api-error.js';
import type { Principal } from '../../src/kernel/principal.js';
import blobs from '../../src/plugins/app/blobs.js';
import db from '../../src/plugins/app/db.js';
import { makeTestEnv, type TestEnv } from '../helpers/env.js';

const PDF = Buffer.from('%PDF-1.7\n%%EOF\n');
const MB = 1024 * 1024;

let env: TestEnv;
let app: FastifyInstance;
let server: http.Server;
let base: string;
let owner: Principal;

beforeAll(async () => {
  // Private URLs admitted: the test server is on 127.0.0.1 (safe-fetch.test.ts covers refusal).
  env = await makeTestEnv('sqlite', { ALLOW_PRIVATE_URLS: '1' });
  app = Fastify();
  app.decorate('config', env.config);
  await app.register(db);
  await app.register(blobs);
  await app.ready();
  const row = await app.db
    .insertInto('accounts')
    .values({
      id: 'acct_src',
      email: 'src@example.com',
      plan: 'free',
      webhook_secret: 'whsec_x',
      created_at: 0,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  owner = { accountId: row.id, keyId: 'key_x', mode: 'live', plan: 'free' };
  server = http.createServer((req, res) => {
    if (req.url === '/doc.pdf') return res.end(PDF);
    // 21 MB, over the free plan's 20 MB.
    res.writeHead(200, { 'content-length': 21 * MB });
    res.end(Buffer.alloc(21 * MB));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await app?.close();
  await env?.cleanup();
});

async function code(principal: Principal, source: SourceInput): Promise<string> {
  const err = await resolveSource(app, principal, source).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return (err as ApiError).code;
}

async function storedFile(): Promise<string> {
  const file = await reserveFile(app.db, owner, {
    kind: 'upload',
    contentType: 'application/pdf',
    maxBytes: MB,
    ttlMs: 60_000,
  });
  const put = await app.blobs.put(`${file.id}-b`, PDF, { maxBytes: MB });
  await markStored(app.db, file.id, { blobKey: `${file.id}-b`, ...put });
  return file.id;
}

describe('resolveSource', () => {
  it('reads an own stored file and passes the password on', async () => {
    const id = await storedFile();
    const got = await resolveSource(app, owner, { file_id: id, password: 'pw' });
    expect(got.bytes.equals(PDF)).toBe(true);
    expect(got.password).toBe('pw');
  });

  it('answers not_found for another account, the other mode, unknown and unuploaded files', async () => {
    const id = await storedFile();
    expect(await code({ ...owner, accountId: 'acct_other' }, { file_id: id })).toBe('not_found');
    expect(await code({ ...owner, mode: 'test' }, { file_id: id })).toBe('not_found');
    expect(await code(owner, { file_id: 'file_nope' })).toBe('not_found');
    const reserved = await reserveFile(app.db, owner, {
      kind: 'upload',
      contentType: 'application/pdf',
      maxBytes: MB,
      ttlMs: 60_000,
    });
    expect(await code(owner, { file_id: reserved.id })).toBe('not_found');
  });

  it('needs exactly one of file_id and url', async () => {
    expect(await code(owner, {})).toBe('invalid_request');
    expect(await code(owner, { file_id: 'file_x', url: `${base}/doc.pdf` })).toBe('invalid_request');
  });

  it('fetches a URL, 413 over the plan size, 400 for a URL refused without fetching', async () => {
    const got = await resolveSource(app, owner, { url: `${base}/doc.pdf` });
    expect(got.bytes.equals(PDF)).toBe(true);
    expect(got.password).toBeUndefined();
    expect(await code(owner, { url: `${base}/big.pdf` })).toBe('too_large');
    expect(await code(owner, { url: 'ftp://example.com/x.pdf' })).toBe('invalid_request');
  });
});

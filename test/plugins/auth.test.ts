import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureAccount } from '../../src/domain/accounts.js';
import { createKey, revokeKey } from '../../src/domain/api-keys.js';
import auth from '../../src/plugins/app/auth.js';
import db from '../../src/plugins/app/db.js';
import errors from '../../src/plugins/app/errors.js';
import { makeTestEnv, type TestEnv } from '../helpers/env.js';

let env: TestEnv;
let app: FastifyInstance;
let liveKey: string;
let liveKeyId: string;
let testKey: string;
let revokedKey: string;
let accountId: string;

beforeAll(async () => {
  env = await makeTestEnv('sqlite');
  app = Fastify();
  app.decorate('config', env.config);
  await app.register(errors);
  await app.register(db);
  await app.register(auth);
  // Throwaway routes: echo what the hooks decided.
  app.get('/private', { onRequest: app.requireKey }, async (request) => ({ principal: request.principal }));
  app.get('/open', { onRequest: app.optionalKey }, async (request) => ({
    principal: request.principal ?? null,
  }));
  await app.ready();

  const account = await ensureAccount(app.db, 'auth@example.com', 'starter');
  accountId = account.id;
  const live = await createKey(app.db, account.id, 'live');
  liveKey = live.key;
  liveKeyId = live.keyId;
  testKey = (await createKey(app.db, account.id, 'test')).key;
  revokedKey = (await createKey(app.db, account.id, 'live')).key;
  await revokeKey(app.db, revokedKey);
});

afterAll(async () => {
  await app?.close();
  await env?.cleanup();
});

const get = (url: string, authorization?: string) =>
  app.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization } });

function expectUnauthorized(res: Awaited<ReturnType<typeof get>>, message: RegExp) {
  expect(res.statusCode).toBe(401);
  const body = res.json();
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe('unauthorized');
  expect(body.error.message).toMatch(message);
  expect(typeof body.error.hint).toBe('string');
  expect(body.error.hint.length).toBeGreaterThan(0);
}

describe('requireKey', () => {
  it('accepts a live key and sets the principal', async () => {
    const res = await get('/private', `Bearer ${liveKey}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().principal).toEqual({ accountId, keyId: liveKeyId, mode: 'live', plan: 'starter' });
  });

  it('accepts a test key with mode test, and a lower-case scheme', async () => {
    const res = await get('/private', `bearer ${testKey}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().principal.mode).toBe('test');
  });

  it('refuses a missing key', async () => {
    expectUnauthorized(await get('/private'), /header is missing/);
  });

  it.each([
    ['no scheme', () => liveKey],
    ['another scheme', () => `Basic ${liveKey}`],
    ['empty', () => ''],
    ['scheme only', () => 'Bearer'],
    ['two tokens', () => `Bearer ${liveKey} extra`],
  ])('refuses a malformed header (%s)', async (_name, header) => {
    expectUnauthorized(await get('/private', header()), /not of the form "Bearer <API key>"/);
  });

  it('refuses a token that is not shaped like a key', async () => {
    expectUnauthorized(await get('/private', 'Bearer sk_live_123'), /malformed/);
  });

  it('refuses an unknown key', async () => {
    expectUnauthorized(await get('/private', `Bearer sk_live_${'x'.repeat(33)}`), /Unknown API key/);
  });

  it('refuses a revoked key', async () => {
    expectUnauthorized(await get('/private', `Bearer ${revokedKey}`), /revoked/);
  });
});

describe('optionalKey', () => {
  it('lets a keyless call through without a principal', async () => {
    const res = await get('/open');
    expect(res.statusCode).toBe(200);
    expect(res.json().principal).toBeNull();
  });

  it('sets the principal when a valid key is sent', async () => {
    const res = await get('/open', `Bearer ${testKey}`);
    expect(res.json().principal.mode).toBe('test');
  });

  it('refuses a key that is sent but bad, rather than falling back to keyless', async () => {
    expectUnauthorized(await get('/open', `Bearer ${revokedKey}`), /revoked/);
    expectUnauthorized(await get('/open', 'Token abc'), /not of the form/);
  });
});

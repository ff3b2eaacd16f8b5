import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getWebhookSecret } from '../../src/domain/accounts.js';
import { lookupKey } from '../../src/domain/api-keys.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';

describe('GET /v1/webhook-secret and POST /v1/webhook-secret/rotate', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('sqlite');
  });
  afterAll(async () => {
    await t?.close();
  });

  async function accountOf(key: string): Promise<string> {
    const found = await lookupKey(t.app.db, key);
    if (found.status !== 'ok') throw new Error(`key ${found.status}`);
    return found.principal.accountId;
  }

  it('reads the secret the jobs sign with, and rotating replaces it at once', async () => {
    const key = await t.newKey('hooks@example.com');
    const account = await accountOf(key);
    const read = await t.app.inject({ method: 'GET', url: '/v1/webhook-secret', headers: bearer(key) });
    expect(read.statusCode).toBe(200);
    expect(read.headers['x-ratelimit-limit']).toBeDefined();
    const first = read.json().webhook_secret as string;
    expect(first).toMatch(/^whsec_[0-9A-Za-z]{24,}$/);
    expect(first).toBe(await getWebhookSecret(t.app.db, account));

    const rotated = await t.app.inject({
      method: 'POST',
      url: '/v1/webhook-secret/rotate',
      headers: bearer(key),
    });
    expect(rotated.statusCode).toBe(200);
    const second = rotated.json().webhook_secret as string;
    expect(second).toMatch(/^whsec_[0-9A-Za-z]{24,}$/);
    expect(second).not.toBe(first);
    expect(await getWebhookSecret(t.app.db, account)).toBe(second);
    const again = await t.app.inject({ method: 'GET', url: '/v1/webhook-secret', headers: bearer(key) });
    expect(again.json().webhook_secret).toBe(second);
  });

  it('keeps accounts apart: a test key of another account reads its own secret', async () => {
    const mine = await t.newKey('one@example.com');
    const theirs = await t.newKey('two@example.com', 'free', 'test');
    const a = await t.app.inject({ method: 'GET', url: '/v1/webhook-secret', headers: bearer(mine) });
    const b = await t.app.inject({ method: 'GET', url: '/v1/webhook-secret', headers: bearer(theirs) });
    expect(a.json().webhook_secret).not.toBe(b.json().webhook_secret);
    expect(b.json().webhook_secret).toBe(await getWebhookSecret(t.app.db, await accountOf(theirs)));
  });

  it('answers 401 without a key or with an unknown one, and changes nothing', async () => {
    const key = await t.newKey('safe@example.com');
    const before = await getWebhookSecret(t.app.db, await accountOf(key));
    for (const headers of [{}, bearer('sk_live_000000000000000000000000')]) {
      for (const [method, url] of [
        ['GET', '/v1/webhook-secret'],
        ['POST', '/v1/webhook-secret/rotate'],
      ] as const) {
        const res = await t.app.inject({ method, url, headers });
        expect(res.statusCode, `${method} ${url}`).toBe(401);
        expect(res.json().error.code).toBe('unauthorized');
      }
    }
    expect(await getWebhookSecret(t.app.db, await accountOf(key))).toBe(before);
  });

  it('is described in the generated OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const [path, method] of [
      ['/v1/webhook-secret', 'get'],
      ['/v1/webhook-secret/rotate', 'post'],
    ] as const) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op['x-pdfedit-status']).toBeUndefined();
      expect(op.responses['200'].content['application/json'].schema.$ref).toBe(
        '#/components/schemas/WebhookSecret',
      );
      expect(op.security).toEqual([{ bearerAuth: [] }]);
    }
    expect(doc.components.schemas.WebhookSecret.properties.webhook_secret.type).toBe('string');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, startApp, type TestApp } from './helpers/app.js';
import { DB_KINDS } from './helpers/env.js';

describe.each(DB_KINDS)('service skeleton (%s)', (kind) => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startApp(kind);
    key = await t.newKey();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers /healthz with status ok and a request id', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    // The engine part (processes, queue) is checked in test/routes/health.test.ts.
    expect(res.json()).toMatchObject({ status: 'ok', engine: { queued: 0, saturated_ms: 0 } });
    expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
  });

  it('gives every response its own X-Request-Id, errors included', async () => {
    const a = await t.app.inject({ method: 'GET', url: '/nope' });
    const b = await t.app.inject({ method: 'GET', url: '/nope' });
    expect(a.headers['x-request-id']).toBeTruthy();
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });

  it('answers unknown routes with 404 not_found in the envelope', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    const body = res.json();
    expect(body.error.code).toBe('not_found');
    expect(typeof body.error.message).toBe('string');
    expect(typeof body.error.hint).toBe('string');
  });

  it('refuses unknown JSON members naming the member', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/text',
      headers: bearer(key),
      payload: { source: { file_id: 'file_x' }, pagez: [1] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
    expect(res.json().error.message).toContain('pagez');
  });

  it('refuses unknown members in nested objects too', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/preview',
      headers: bearer(key),
      payload: { source: { file_id: 'file_x', passwrd: 'x' } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('passwrd');
  });

  it('answers malformed JSON with 400 invalid_request', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/text',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      payload: '{"source": ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
  });

  it('asks for a key on keyed routes', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/text',
      payload: { source: { file_id: 'x' } },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthorized');
  });
});

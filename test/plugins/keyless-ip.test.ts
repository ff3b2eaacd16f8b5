import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverOptions } from '../../src/app.js';
import auth from '../../src/plugins/app/auth.js';
import db from '../../src/plugins/app/db.js';
import errors from '../../src/plugins/app/errors.js';
import rateLimit from '../../src/plugins/app/rate-limit.js';
import requestId from '../../src/plugins/app/request-id.js';
import { makeTestEnv, type TestEnv } from '../helpers/env.js';

/** Keyless calls count per client address group; X-Forwarded-For only from trusted proxies. */
describe('keyless rate budget by client address', () => {
  let env: TestEnv;
  let app: FastifyInstance;

  beforeAll(async () => {
    env = await makeTestEnv('sqlite', { RATE_LIMIT_FACTOR: '1', TRUSTED_PROXIES: '10.0.0.1' });
    env.config.now = () => Date.UTC(2026, 10, 22, 12, 0, 30);
    app = Fastify(serverOptions(env.config));
    app.decorate('config', env.config);
    await app.register(requestId);
    await app.register(errors);
    await app.register(db);
    await app.register(auth);
    await app.register(rateLimit);
    app.get('/try', { onRequest: [app.optionalKey, app.rateLimit] }, async (request) => ({ ip: request.ip }));
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  const hit = (remoteAddress: string, xff?: string) =>
    app.inject({ method: 'GET', url: '/try', remoteAddress, headers: xff ? { 'x-forwarded-for': xff } : {} });

  it('gives an address 10 requests a minute, shared by its IPv6 /64', async () => {
    for (let i = 0; i < 10; i++) {
      const res = await hit(i % 2 ? '2001:db8:5:6::1' : '2001:db8:5:6::abcd');
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('10');
    }
    const over = await hit('2001:db8:5:6::77');
    expect(over.statusCode).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect((await hit('2001:db8:5:7::1')).statusCode).toBe(200);
  });

  it('believes X-Forwarded-For only from a trusted proxy', async () => {
    const viaProxy = await hit('10.0.0.1', '198.51.100.9');
    expect(viaProxy.json().ip).toBe('198.51.100.9');
    const spoofed = await hit('203.0.113.5', '198.51.100.9');
    expect(spoofed.json().ip).toBe('203.0.113.5');
    // The spoofer's requests count against its own address, not the forged one.
    for (let i = 0; i < 9; i++) expect((await hit('203.0.113.5', `198.51.100.${i}`)).statusCode).toBe(200);
    expect((await hit('203.0.113.5', '198.51.100.200')).statusCode).toBe(429);
    expect((await hit('10.0.0.1', '198.51.100.10')).statusCode).toBe(200);
  });
});

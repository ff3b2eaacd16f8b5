import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/app.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';

const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
// Mid-minute, so a run never straddles two windows.
const NOW = Date.UTC(2026, 10, 22, 12, 0, 30);

describe.each(['memory', 'redis'] as const)('rate limits (%s counters)', (store) => {
  let t: TestApp;
  let second: FastifyInstance | undefined;
  const prefix = `pdfedit-test:${randomBytes(6).toString('hex')}:`;

  beforeAll(async () => {
    t = await startApp('sqlite', {
      RATE_LIMIT_FACTOR: '1',
      RATE_LIMIT_PREFIX: prefix,
      ...(store === 'redis' ? { REDIS_URL } : {}),
    });
    t.app.config.now = () => NOW;
  });
  afterAll(async () => {
    await second?.close();
    await t?.close();
    if (store === 'redis') {
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  const limits = (app: FastifyInstance, key: string) =>
    app.inject({ method: 'GET', url: '/v1/limits', headers: bearer(key) });

  it('counts down in the headers and answers 429 with Retry-After past the plan budget', async () => {
    const key = await t.newKey('rl-a@example.com', 'free');
    for (let i = 1; i <= 30; i++) {
      const res = await limits(t.app, key);
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('30');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(30 - i));
      expect(res.headers['x-ratelimit-reset']).toBe(String(Math.ceil((NOW + 30_000) / 1000)));
    }
    const over = await limits(t.app, key);
    expect(over.statusCode).toBe(429);
    expect(over.json().error.code).toBe('rate_limited');
    expect(over.headers['retry-after']).toBe('30');
    expect(over.headers['x-ratelimit-remaining']).toBe('0');
    expect(over.headers['x-request-id']).toBeTruthy();
    // Another key has its own budget; the next window refills.
    expect((await limits(t.app, await t.newKey('rl-b@example.com', 'free'))).statusCode).toBe(200);
    t.app.config.now = () => NOW + 60_000;
    expect((await limits(t.app, key)).statusCode).toBe(200);
    t.app.config.now = () => NOW;
  });

  it('puts the headers on the other (rl) routes and follows the plan', async () => {
    const key = await t.newKey('rl-c@example.com', 'scale');
    for (const [method, url] of [
      ['GET', '/v1/usage'],
      ['POST', '/v1/files'],
      ['DELETE', '/v1/files/file_nope'],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: bearer(key) });
      expect(res.headers['x-ratelimit-limit'], url).toBe('1200');
    }
  });

  it.runIf(store === 'redis')('shares one budget between two API processes', async () => {
    second = await buildServer(t.env.config);
    const key = await t.newKey('rl-d@example.com', 'free');
    const results = [];
    for (let i = 0; i < 31; i++) results.push((await limits(i % 2 ? second : t.app, key)).statusCode);
    expect(results.filter((s) => s === 200)).toHaveLength(30);
    expect(results[30]).toBe(429);
    expect((await limits(second, key)).statusCode).toBe(429);
  });
});

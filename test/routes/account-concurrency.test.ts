import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/app.js';
import { PLANS } from '../../src/billing/plans.js';
import { ApiError } from '../../src/kernel/api-error.js';
import type { Principal } from '../../src/kernel/principal.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { corpusPath } from '../helpers/corpus.js';
import { type EditApp, startEditApp } from '../helpers/edit-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import { REDIS_URL } from '../helpers/redis.js';

/** Holds `n` of the account's sync-edit slots until `release` is called. */
function holdSlots(a: EditApp, principal: Principal, n: number) {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const held = Array.from({ length: n }, () => a.t.app.editSlots(principal, () => gate));
  return {
    release: async () => {
      release();
      await Promise.all(held);
    },
  };
}

describe.skipIf(!HAVE_CORPUS)('plan concurrency of synchronous edits', () => {
  let a: EditApp;
  let principal: Principal;

  beforeAll(async () => {
    a = await startEditApp({ 'trivial.pdf': corpusPath('font-tt-subset-libreoffice-trivial.pdf') }, 'conc');
    const row = await a.t.app.db
      .selectFrom('api_keys')
      .select(['id', 'account_id'])
      .where('prefix', '=', a.key.slice(0, 12))
      .executeTakeFirstOrThrow();
    principal = { accountId: row.account_id, keyId: row.id, mode: 'live', plan: 'free' };
  });

  afterAll(async () => {
    await a?.close();
  });

  const edit = () => a.edit('trivial.pdf', [{ op: 'replace', find: 'no such phrase here', replace: 'x' }]);

  it('answers 429 rate_limited with Retry-After above the plan concurrency; jobs still queue', async () => {
    const limit = PLANS.free.concurrency;
    const busy = holdSlots(a, principal, limit);
    const refused = await edit();
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('rate_limited');
    expect(refused.json().error.message).toContain(`Over ${limit} synchronous edits`);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // A job is not a synchronous edit: it queues.
    const queued = await a.edit(
      'trivial.pdf',
      [{ op: 'replace', find: 'no such phrase here', replace: 'x' }],
      {
        async: true,
      },
    );
    expect(queued.statusCode).toBe(202);
    await busy.release();
    const ok = await edit();
    expect(ok.statusCode).not.toBe(429);
    expect(ok.statusCode).toBeLessThan(300);
  });

  it('lets edits through up to the limit, and counts per account', async () => {
    const busy = holdSlots(a, principal, PLANS.free.concurrency - 1);
    expect((await edit()).statusCode).toBeLessThan(300);
    // Another account's slots do not count against this one.
    const other = holdSlots(a, { ...principal, accountId: 'acct_other' }, PLANS.free.concurrency);
    expect((await edit()).statusCode).toBeLessThan(300);
    await busy.release();
    await other.release();
  });
});

describe('plan concurrency shared through Redis', () => {
  let t: TestApp;
  let second: FastifyInstance;
  const prefix = `pdfedit-test:${randomBytes(6).toString('hex')}:`;

  beforeAll(async () => {
    t = await startApp('sqlite', {
      REDIS_URL,
      RATE_LIMIT_PREFIX: prefix,
      QUEUE_PREFIX: `pdfedit-test-${randomBytes(6).toString('hex')}`,
    });
    second = await buildServer(t.env.config);
  });

  afterAll(async () => {
    await second?.close();
    await t?.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('counts the slots of one account across API processes and frees them when edits end', async () => {
    const principal: Principal = { accountId: 'acct_shared', keyId: 'key_x', mode: 'live', plan: 'starter' };
    const limit = PLANS.starter.concurrency;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    // The plan's slots taken on the first process...
    const held = Array.from({ length: limit }, () => t.app.editSlots(principal, () => gate));
    // ...so the second process refuses the next one.
    const refused = await second.editSlots(principal, async () => 'ran').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('rate_limited');
    expect((refused as ApiError).headers?.['Retry-After']).toBe('2');
    release();
    await Promise.all(held);
    expect(await second.editSlots(principal, async () => 'ran')).toBe('ran');
    const redis = new Redis(REDIS_URL);
    expect(Number(await redis.get(`${prefix}conc:acct_shared`))).toBe(0);
    await redis.quit();
  });
});

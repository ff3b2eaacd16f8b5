import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureAccount } from '../../src/domain/accounts.js';
import { createKey } from '../../src/domain/api-keys.js';
import {
  canonicalJson,
  hashBody,
  idempotencyScope,
  sweepIdempotencyRecords,
  withIdempotency,
} from '../../src/domain/idempotency.js';
import { ApiError } from '../../src/kernel/api-error.js';
import auth from '../../src/plugins/app/auth.js';
import db from '../../src/plugins/app/db.js';
import errors from '../../src/plugins/app/errors.js';
import requestId from '../../src/plugins/app/request-id.js';
import type { IdempotencySchema } from '../../src/store/idempotency-schema.js';
import { bearer } from '../helpers/app.js';
import { DB_KINDS, makeTestEnv, type TestEnv } from '../helpers/env.js';

interface DummyBody {
  n?: number;
  delayMs?: number;
  fail?: 'client' | 'server';
  /** Write the answer in run's own transaction (settle), which then commits, or fails after
   * it (the transaction rolls back), as the edit route does with its output and charge. */
  settle?: 'commit' | 'rollback';
}

describe.each(DB_KINDS)('withIdempotency on %s', (kind) => {
  let env: TestEnv;
  let app: FastifyInstance;
  let runs = 0;
  let key: string;
  let leaseMs = 60_000;

  beforeAll(async () => {
    env = await makeTestEnv(kind);
    app = Fastify();
    app.decorate('config', env.config);
    await app.register(requestId);
    await app.register(errors);
    await app.register(db);
    await app.register(auth);
    // A dummy route doing "work" the way POST /v1/edit does.
    app.post<{ Body: DummyBody }>('/dummy', { onRequest: app.optionalKey }, async (request, reply) => {
      const out = await withIdempotency(
        {
          db: app.db,
          scope: idempotencyScope(request.principal, request.ip),
          route: 'POST /dummy',
          key: request.headers['idempotency-key'],
          bodyHash: hashBody(request.body),
          leaseMs,
          waitMs: 1_500,
        },
        async ({ workId, settle }) => {
          runs += 1;
          const run = runs;
          if (request.body.delayMs) await new Promise((r) => setTimeout(r, request.body.delayMs));
          if (request.body.settle) {
            const answer = { status: 201, headers: { 'x-run': String(run) }, body: { run, settled: true } };
            await app.db.transaction().execute(async (trx) => {
              await settle(trx, answer);
              if (request.body.settle === 'rollback') throw new Error('the commit failed');
            });
            // What run returns after settling is not written again: the settled answer stays.
            return { ...answer, body: { run, settled: false } };
          }
          if (request.body.fail === 'client') throw new ApiError('edit_failed', 'every edit failed');
          if (request.body.fail === 'server') throw new Error('boom');
          return { status: 201, headers: { 'x-run': String(run) }, body: { run, workId, n: request.body.n } };
        },
      );
      return reply.code(out.status).headers(out.headers).send(out.body);
    });
    await app.ready();
    const acct = await ensureAccount(app.db, 'idem@example.com', 'free');
    key = (await createKey(app.db, acct.id, 'live')).key;
  });
  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });
  beforeEach(() => {
    runs = 0;
    leaseMs = 60_000;
  });

  const post = (body: DummyBody, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: '/dummy', headers: { ...bearer(key), ...headers }, payload: body });

  it('runs 20 parallel identical requests once and replays the rest', async () => {
    const all = await Promise.all(
      Array.from({ length: 20 }, () => post({ n: 1, delayMs: 300 }, { 'idempotency-key': 'k-parallel' })),
    );
    expect(runs).toBe(1);
    const bodies = new Set(all.map((r) => r.body));
    expect(bodies.size).toBe(1);
    expect(all.every((r) => r.statusCode === 201)).toBe(true);
    expect(all.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    expect(all.every((r) => r.headers['x-run'] === '1')).toBe(true);
  });

  it('derives a key from the body when none is sent (a blind retry is safe)', async () => {
    const a = await post({ n: 2 });
    const b = await post({ n: 2 });
    expect(runs).toBe(1);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(b.json()).toEqual(a.json());
    await post({ n: 3 });
    expect(runs).toBe(2);
  });

  it('refuses the same key with another body, and keys over 255 characters', async () => {
    expect((await post({ n: 4 }, { 'idempotency-key': 'k-body' })).statusCode).toBe(201);
    const other = await post({ n: 5 }, { 'idempotency-key': 'k-body' });
    expect(other.statusCode).toBe(400);
    expect(other.json().error.code).toBe('invalid_request');
    const long = await post({ n: 4 }, { 'idempotency-key': 'x'.repeat(256) });
    expect(long.statusCode).toBe(400);
    expect((await post({ n: 4 }, { 'idempotency-key': 'x'.repeat(255) })).statusCode).toBe(201);
  });

  it('answers 409 conflict when the first is still running after the wait', async () => {
    const first = post({ n: 6, delayMs: 2_500 }, { 'idempotency-key': 'k-slow' });
    await new Promise((r) => setTimeout(r, 100));
    const dup = await post({ n: 6, delayMs: 2_500 }, { 'idempotency-key': 'k-slow' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error.code).toBe('conflict');
    expect((await first).statusCode).toBe(201);
    expect(runs).toBe(1);
  });

  it('takes over a running record whose lease ran out (crashed process)', async () => {
    leaseMs = 200;
    const first = post({ n: 7, delayMs: 1_000 }, { 'idempotency-key': 'k-crash' });
    await new Promise((r) => setTimeout(r, 400));
    const again = await post({ n: 7, delayMs: 1_000 }, { 'idempotency-key': 'k-crash' });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(runs).toBe(2);
    await first;
    // Both runs shared one work id, so a charge inside them is made once.
    expect(again.json().workId).toBe((await first).json().workId);
  });

  it("keeps the answer written in run's own transaction, and releases the record when that transaction fails", async () => {
    const first = await post({ n: 20, settle: 'commit' }, { 'idempotency-key': 'k-settle' });
    expect(first.statusCode).toBe(201);
    const again = await post({ n: 20, settle: 'commit' }, { 'idempotency-key': 'k-settle' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual({ run: 1, settled: true });
    expect(runs).toBe(1);
    // Rolled back with the transaction: nothing stored, the record released, a retry runs.
    const failed = await post({ n: 21, settle: 'rollback' }, { 'idempotency-key': 'k-rollback' });
    expect(failed.statusCode).toBe(500);
    const rows = await app.db
      .withTables<IdempotencySchema>()
      .selectFrom('idempotency_records')
      .select('state')
      .where('key', '=', 'key:k-rollback')
      .execute();
    expect(rows).toEqual([]);
    const retry = await post({ n: 21, settle: 'commit' }, { 'idempotency-key': 'k-rollback-2' });
    expect(retry.statusCode).toBe(201);
    expect(runs).toBe(3);
  });

  it('stores final client errors and forgets server errors', async () => {
    const a = await post({ fail: 'client' }, { 'idempotency-key': 'k-422' });
    const b = await post({ fail: 'client' }, { 'idempotency-key': 'k-422' });
    expect([a.statusCode, b.statusCode]).toEqual([422, 422]);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(b.json()).toEqual(a.json());
    expect(runs).toBe(1);
    expect((await post({ fail: 'server' }, { 'idempotency-key': 'k-500' })).statusCode).toBe(500);
    expect((await post({ fail: 'server' }, { 'idempotency-key': 'k-500' })).statusCode).toBe(500);
    expect(runs).toBe(3);
  });

  it('scopes keys to the account, the key mode and (keyless) the client address', async () => {
    const acct = await ensureAccount(app.db, 'idem@example.com', 'free');
    const testKey = (await createKey(app.db, acct.id, 'test')).key;
    await post({ n: 8 }, { 'idempotency-key': 'k-scope' });
    const other = await app.inject({
      method: 'POST',
      url: '/dummy',
      headers: { ...bearer(testKey), 'idempotency-key': 'k-scope' },
      payload: { n: 9 },
    });
    expect(other.statusCode).toBe(201);
    const anon = (ip: string) =>
      app.inject({
        method: 'POST',
        url: '/dummy',
        remoteAddress: ip,
        headers: { 'idempotency-key': 'k-scope' },
        payload: { n: 10 },
      });
    expect((await anon('192.0.2.1')).statusCode).toBe(201);
    expect((await anon('192.0.2.2')).headers['idempotent-replayed']).toBeUndefined();
    expect((await anon('192.0.2.1')).headers['idempotent-replayed']).toBe('true');
    expect(runs).toBe(4);
  });

  it('forgets records after 24 hours', async () => {
    await post({ n: 11 }, { 'idempotency-key': 'k-old' });
    const removed = await sweepIdempotencyRecords(app.db, Date.now() + 24 * 3600_000 + 1);
    expect(removed).toBeGreaterThan(0);
    const left = await app.db
      .withTables<IdempotencySchema>()
      .selectFrom('idempotency_records')
      .selectAll()
      .execute();
    expect(left).toHaveLength(0);
  });

  it('takes a key whose record is past its 24 hours but not swept yet as new, whatever its body was', async () => {
    const first = await post({ n: 12 }, { 'idempotency-key': 'k-lapsed' });
    expect(first.statusCode).toBe(201);
    await app.db
      .withTables<IdempotencySchema>()
      .updateTable('idempotency_records')
      .set({ expires_at: Date.now() - 1 })
      .where('key', '=', 'key:k-lapsed')
      .execute();
    const before = runs;
    // Another body under the same key: a live record would answer 400; a lapsed one is gone.
    const again = await post({ n: 13 }, { 'idempotency-key': 'k-lapsed' });
    expect(again.statusCode, again.body).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.json()).toMatchObject({ n: 13 });
    expect(runs).toBe(before + 1);
    // And the new record answers the replay.
    expect((await post({ n: 13 }, { 'idempotency-key': 'k-lapsed' })).headers['idempotent-replayed']).toBe(
      'true',
    );
  });

  it('hashes bodies independently of member order', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
    expect(hashBody({ a: 1, b: 2 })).toBe(hashBody({ b: 2, a: 1 }));
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureAccount } from '../../src/domain/accounts.js';
import { createKey, hashKey, revokeKey } from '../../src/domain/api-keys.js';
import { migrateToLatest, type OpenDatabase, openDatabase } from '../../src/store/db.js';
import { prepared } from '../../src/store/prepared.js';
import { DB_KINDS, makeTestEnv, type TestEnv } from '../helpers/env.js';

// src/store/prepared.ts: a query compiled once per dialect, run with each call's values.
describe.each(DB_KINDS)('prepared queries on %s', (kind) => {
  let env: TestEnv;
  let opened: OpenDatabase;
  beforeAll(async () => {
    env = await makeTestEnv(kind);
    opened = openDatabase(env.config.databaseUrl);
    await migrateToLatest(opened.db);
  });
  afterAll(async () => {
    await opened?.close();
    await env?.cleanup();
  });

  const byHash = prepared<{ hash: string; mode: 'live' | 'test' }, { id: string; revoked_at: number | null }>(
    ['hash', 'mode'],
    (db, v) =>
      db
        .selectFrom('api_keys')
        .select(['id', 'revoked_at'])
        .where('key_hash', '=', v.hash)
        .where('mode', '=', v.mode),
  );

  it('binds each call its own values, in a transaction too, and reads what is there now', async () => {
    const account = await ensureAccount(opened.db, `prepared-${kind}@example.com`, 'free');
    const a = await createKey(opened.db, account.id, 'live');
    const b = await createKey(opened.db, account.id, 'test');
    expect(await byHash.rows(opened.db, { hash: hashKey(a.key), mode: 'live' })).toEqual([
      { id: a.keyId, revoked_at: null },
    ]);
    expect(await byHash.rows(opened.db, { hash: hashKey(b.key), mode: 'test' })).toEqual([
      { id: b.keyId, revoked_at: null },
    ]);
    // The values go to their own placeholders: a's hash with b's mode matches nothing.
    expect(await byHash.rows(opened.db, { hash: hashKey(a.key), mode: 'test' })).toEqual([]);
    // Nothing of a row is kept between calls: a revocation shows at once.
    await revokeKey(opened.db, a.key);
    const [row] = await byHash.rows(opened.db, { hash: hashKey(a.key), mode: 'live' });
    expect(row?.revoked_at).toEqual(expect.any(Number));
    const inTrx = await opened.db
      .transaction()
      .execute((trx) => byHash.rows(trx, { hash: hashKey(b.key), mode: 'test' }));
    expect(inTrx).toEqual([{ id: b.keyId, revoked_at: null }]);
  });

  it('counts the rows an update changed', async () => {
    const account = await ensureAccount(opened.db, `prepared-run-${kind}@example.com`, 'free');
    const k = await createKey(opened.db, account.id, 'live');
    const touch = prepared<{ now: number; id: string }>(['now', 'id'], (db, v) =>
      db.updateTable('api_keys').set({ last_used_at: v.now }).where('id', '=', v.id),
    );
    expect(await touch.run(opened.db, { now: 5, id: k.keyId })).toBe(1);
    expect(await touch.run(opened.db, { now: 5, id: 'key_none' })).toBe(0);
  });

  it('refuses a build that binds a value not passed by name', async () => {
    const constant = prepared<{ id: string }>(['id'], (db, v) =>
      db.selectFrom('api_keys').select('id').where('id', '=', v.id).where('mode', '=', 'live'),
    );
    await expect(constant.rows(opened.db, { id: 'key_x' })).rejects.toThrow(/not one of its named values/);
    const derived = prepared<{ id: string }>(['id'], (db, v) =>
      db.selectFrom('api_keys').select('id').where('id', '=', `${v.id}-x`),
    );
    await expect(derived.rows(opened.db, { id: 'key_x' })).rejects.toThrow(/not one of its named values/);
  });
});

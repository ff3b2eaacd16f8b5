import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Account, ensureAccount } from '../../src/domain/accounts.js';
import {
  authenticate,
  createKey,
  hashKey,
  lookupKey,
  parseKeyMode,
  revokeKey,
} from '../../src/domain/api-keys.js';
import { migrateToLatest, type OpenDatabase, openDatabase } from '../../src/store/db.js';
import { DB_KINDS, makeTestEnv, type TestEnv } from '../helpers/env.js';

describe('parseKeyMode', () => {
  it('accepts only the exact key shape', () => {
    const body = 'A'.repeat(33);
    expect(parseKeyMode(`sk_live_${body}`)).toBe('live');
    expect(parseKeyMode(`sk_test_${body}`)).toBe('test');
    expect(parseKeyMode(`sk_prod_${body}`)).toBeUndefined();
    expect(parseKeyMode(`sk_live_${body}A`)).toBeUndefined();
    expect(parseKeyMode(`sk_live_${'A'.repeat(32)}-`)).toBeUndefined();
    expect(parseKeyMode(` sk_live_${body}`)).toBeUndefined();
  });
});

describe.each(DB_KINDS)('API keys on %s', (kind) => {
  let env: TestEnv;
  let opened: OpenDatabase;
  let account: Account;

  beforeEach(async () => {
    env = await makeTestEnv(kind);
    opened = openDatabase(env.config.databaseUrl);
    await migrateToLatest(opened.db);
    account = await ensureAccount(opened.db, 'keys@example.com', 'growth');
  });
  afterEach(async () => {
    await opened.close();
    await env.cleanup();
  });

  it('creates live and test keys, stored only as their hash', async () => {
    const live = await createKey(opened.db, account.id, 'live');
    const test = await createKey(opened.db, account.id, 'test');
    expect(live.key).toMatch(/^sk_live_[0-9A-Za-z]{33}$/);
    expect(test.key).toMatch(/^sk_test_[0-9A-Za-z]{33}$/);
    expect(live.keyId).toMatch(/^key_[0-9A-Za-z]{17}$/);
    expect(live.prefix).toBe(live.key.slice(0, 12));
    const rows = await opened.db.selectFrom('api_keys').selectAll().orderBy('mode').execute();
    expect(rows.map((r) => [r.mode, r.key_hash])).toEqual([
      ['live', hashKey(live.key)],
      ['test', hashKey(test.key)],
    ]);
    // The plaintext is nowhere in the row.
    for (const row of rows)
      expect(JSON.stringify(row)).not.toContain(row.mode === 'live' ? live.key : test.key);
  });

  it('authenticates a key to its account, mode and plan', async () => {
    const live = await createKey(opened.db, account.id, 'live');
    const test = await createKey(opened.db, account.id, 'test');
    expect(await authenticate(opened.db, live.key)).toEqual({
      accountId: account.id,
      keyId: live.keyId,
      mode: 'live',
      plan: 'growth',
    });
    expect((await authenticate(opened.db, test.key))?.mode).toBe('test');
  });

  it('follows a plan change of the account', async () => {
    const live = await createKey(opened.db, account.id, 'live');
    await ensureAccount(opened.db, account.email, 'scale');
    expect((await authenticate(opened.db, live.key))?.plan).toBe('scale');
  });

  it('says why a key is refused: malformed, unknown, revoked', async () => {
    const live = await createKey(opened.db, account.id, 'live');
    expect(await lookupKey(opened.db, 'sk_live_short')).toEqual({ status: 'malformed' });
    expect(await lookupKey(opened.db, `sk_live_${'0'.repeat(33)}`)).toEqual({ status: 'unknown' });
    // Same shape, other mode: a different key, so unknown.
    expect(await lookupKey(opened.db, live.key.replace('sk_live_', 'sk_test_'))).toEqual({
      status: 'unknown',
    });
    expect(await revokeKey(opened.db, live.key)).toBe(true);
    expect(await lookupKey(opened.db, live.key)).toEqual({ status: 'revoked' });
    expect(await authenticate(opened.db, live.key)).toBeUndefined();
  });

  it('revokes by id or by key, once, and only the key asked for', async () => {
    const a = await createKey(opened.db, account.id, 'live');
    const b = await createKey(opened.db, account.id, 'live');
    expect(await revokeKey(opened.db, a.keyId)).toBe(true);
    expect(await revokeKey(opened.db, a.keyId)).toBe(false);
    expect(await revokeKey(opened.db, a.key)).toBe(false);
    expect(await authenticate(opened.db, b.key)).toBeDefined();
    expect(await revokeKey(opened.db, 'key_doesnotexist')).toBe(false);
    expect(await revokeKey(opened.db, 'garbage')).toBe(false);
    expect(await revokeKey(opened.db, ` ${b.key}\n`)).toBe(true);
    expect(await authenticate(opened.db, b.key)).toBeUndefined();
  });

  it('writes last_used_at at most once a minute', async () => {
    const live = await createKey(opened.db, account.id, 'live');
    const lastUsed = async () =>
      (
        await opened.db
          .selectFrom('api_keys')
          .select('last_used_at')
          .where('id', '=', live.keyId)
          .executeTakeFirstOrThrow()
      ).last_used_at;
    expect(await lastUsed()).toBeNull();
    const t0 = 1_800_000_000_000;
    await lookupKey(opened.db, live.key, t0);
    expect(await lastUsed()).toBe(t0);
    await lookupKey(opened.db, live.key, t0 + 59_999);
    expect(await lastUsed()).toBe(t0);
    await lookupKey(opened.db, live.key, t0 + 60_000);
    expect(await lastUsed()).toBe(t0 + 60_000);
  });

  it('refuses a key for an account that does not exist', async () => {
    await expect(createKey(opened.db, 'acct_missing', 'live')).rejects.toThrow(/no account/);
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ensureAccount,
  findAccountByEmail,
  getWebhookSecret,
  normaliseEmail,
} from '../../src/domain/accounts.js';
import { ApiError } from '../../src/kernel/api-error.js';
import { migrateToLatest, type OpenDatabase, openDatabase } from '../../src/store/db.js';
import { DB_KINDS, makeTestEnv, type TestEnv } from '../helpers/env.js';

describe('normaliseEmail', () => {
  it('trims and lower-cases', () => {
    expect(normaliseEmail('  Ann.Lee@Example.COM ')).toBe('ann.lee@example.com');
  });

  it.each([
    '',
    'ann',
    'ann@',
    '@example.com',
    'ann@example',
    'a b@example.com',
    'ann@@example.com',
    'ann@example.',
  ])('refuses %j with invalid_request', (bad) => {
    expect(() => normaliseEmail(bad)).toThrow(ApiError);
    expect(() => normaliseEmail(bad)).toThrow(/not a valid email/);
  });

  it('refuses an address longer than 254 characters', () => {
    expect(() => normaliseEmail(`${'a'.repeat(250)}@example.com`)).toThrow(ApiError);
  });
});

describe.each(DB_KINDS)('accounts on %s', (kind) => {
  let env: TestEnv;
  let opened: OpenDatabase;

  beforeEach(async () => {
    env = await makeTestEnv(kind);
    opened = openDatabase(env.config.databaseUrl);
    await migrateToLatest(opened.db);
  });
  afterEach(async () => {
    await opened.close();
    await env.cleanup();
  });

  it('creates an account with a normalised email, an acct_ id and a whsec_ secret', async () => {
    const before = Date.now();
    const account = await ensureAccount(opened.db, ' Ann@Example.com', 'starter');
    expect(account.id).toMatch(/^acct_[0-9A-Za-z]{17}$/);
    expect(account).toMatchObject({ email: 'ann@example.com', plan: 'starter' });
    expect(account.createdAt).toBeGreaterThanOrEqual(before);
    expect(account).not.toHaveProperty('webhookSecret');
    expect(await getWebhookSecret(opened.db, account.id)).toMatch(/^whsec_[0-9A-Za-z]{33}$/);
  });

  it('updates the plan of an existing account and keeps its id and secret', async () => {
    const first = await ensureAccount(opened.db, 'ann@example.com', 'free');
    const secret = await getWebhookSecret(opened.db, first.id);
    const second = await ensureAccount(opened.db, 'ANN@example.com', 'growth');
    expect(second.id).toBe(first.id);
    expect(second.plan).toBe('growth');
    expect(await getWebhookSecret(opened.db, first.id)).toBe(secret);
    expect(await findAccountByEmail(opened.db, 'Ann@Example.com')).toEqual(second);
    const count = await opened.db
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(count.n).toBe(1);
  });

  it('gives different accounts different ids and secrets', async () => {
    const a = await ensureAccount(opened.db, 'a@example.com', 'free');
    const b = await ensureAccount(opened.db, 'b@example.com', 'free');
    expect(a.id).not.toBe(b.id);
    expect(await getWebhookSecret(opened.db, a.id)).not.toBe(await getWebhookSecret(opened.db, b.id));
  });

  it('creates one account when two calls race for a new email', async () => {
    const [a, b] = await Promise.all([
      ensureAccount(opened.db, 'race@example.com', 'free'),
      ensureAccount(opened.db, 'race@example.com', 'scale'),
    ]);
    expect(a.id).toBe(b.id);
  });

  it('refuses an unknown plan and an invalid email', async () => {
    await expect(ensureAccount(opened.db, 'a@example.com', 'gold' as 'free')).rejects.toThrow(/Unknown plan/);
    await expect(ensureAccount(opened.db, 'nope', 'free')).rejects.toThrow(/not a valid email/);
    expect(await findAccountByEmail(opened.db, 'a@example.com')).toBeUndefined();
  });
});

import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config.js';
import { migrateToLatest, type OpenDatabase, openDatabase } from '../../src/store/db.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { DB_KINDS, makeTestEnv, type TestEnv } from '../helpers/env.js';

const run = promisify(execFile);
const CHILD = path.join(PROJECT_ROOT, 'test/store/migrate-child.ts');

const account = (id: string, createdAt = Date.now()) => ({
  id,
  email: `${id}@example.com`,
  plan: 'free',
  webhook_secret: 'whsec_x',
  created_at: createdAt,
});

describe('openDatabase', () => {
  it('refuses a URL of another kind', () => {
    expect(() => openDatabase('mysql://localhost/x')).toThrow(/sqlite:<path> or a postgres/);
    expect(() => openDatabase('sqlite:')).toThrow(/file path/);
  });
});

describe.each(DB_KINDS)('database on %s', (kind) => {
  let env: TestEnv;
  let opened: OpenDatabase;

  beforeEach(async () => {
    env = await makeTestEnv(kind);
    opened = openDatabase(env.config.databaseUrl);
  });
  afterEach(async () => {
    await opened.close();
    await env.cleanup();
  });

  it('reports its kind and migrates to the latest schema, then has nothing left to do', async () => {
    expect(opened.kind).toBe(kind);
    const first = await migrateToLatest(opened.db);
    expect(first.map((r) => [r.migrationName, r.status])).toEqual(
      Object.keys(MIGRATIONS).map((name) => [name, 'Success']),
    );
    expect(await migrateToLatest(opened.db)).toEqual([]);
    const tables = (await opened.db.introspection.getTables()).map((t) => t.name);
    expect(tables).toEqual(expect.arrayContaining(['accounts', 'api_keys']));
  });

  it('reads bigint timestamps back as JS numbers', async () => {
    await migrateToLatest(opened.db);
    const big = 4_102_444_800_000; // 2100-01-01: beyond 32 bits
    await opened.db.insertInto('accounts').values(account('acct_t', big)).execute();
    const row = await opened.db.selectFrom('accounts').select('created_at').executeTakeFirstOrThrow();
    expect(row.created_at).toBe(big);
    const count = await opened.db
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(count.n).toBe(1);
  });

  it('enforces foreign keys, unique emails and the key mode check', async () => {
    await migrateToLatest(opened.db);
    await opened.db.insertInto('accounts').values(account('acct_a')).execute();
    const key = (id: string, accountId: string, mode: 'live' | 'test', hash: string) => ({
      id,
      account_id: accountId,
      mode,
      prefix: 'sk_live_abcd',
      key_hash: hash,
      created_at: 1,
      revoked_at: null,
      last_used_at: null,
    });
    await expect(
      opened.db
        .insertInto('api_keys')
        .values(key('key_1', 'acct_none', 'live', 'h1'))
        .execute(),
    ).rejects.toThrow();
    await expect(
      opened.db
        .insertInto('accounts')
        .values({ ...account('acct_b'), email: 'acct_a@example.com' })
        .execute(),
    ).rejects.toThrow();
    await expect(
      opened.db
        .insertInto('api_keys')
        .values(key('key_2', 'acct_a', 'prod' as 'live', 'h2'))
        .execute(),
    ).rejects.toThrow();
    await opened.db
      .insertInto('api_keys')
      .values(key('key_3', 'acct_a', 'test', 'h3'))
      .execute();
    await expect(
      opened.db
        .insertInto('api_keys')
        .values(key('key_4', 'acct_a', 'live', 'h3'))
        .execute(),
    ).rejects.toThrow();
  });

  it('survives several processes migrating the same fresh database at once', async () => {
    await opened.close(); // leave the fresh database to the children alone
    const startAt = String(Date.now() + 3_000);
    const children = await Promise.all(
      [1, 2, 3, 4].map(() =>
        run(process.execPath, ['--import', 'tsx', CHILD, env.config.databaseUrl, startAt], {
          cwd: PROJECT_ROOT,
        }),
      ),
    );
    const applied = children.flatMap((c) => JSON.parse(c.stdout) as string[]);
    // Each migration ran in exactly one process; the others found nothing to do.
    expect(applied.sort()).toEqual(Object.keys(MIGRATIONS).sort());
    opened = openDatabase(env.config.databaseUrl);
    const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(opened.db);
    expect(rows.rows.map((r) => r.name).sort()).toEqual(Object.keys(MIGRATIONS).sort());
    expect(await migrateToLatest(opened.db)).toEqual([]);
  });
});

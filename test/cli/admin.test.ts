import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { PROJECT_ROOT } from '../../src/config.js';
import { authenticate } from '../../src/domain/api-keys.js';
import { selfDb } from '../../src/domain/sessions.js';
import { acceptedCurrentTerms, TERMS_VERSION } from '../../src/domain/terms.js';
import { migrateToLatest, openDatabase } from '../../src/store/db.js';
import { makeTestEnv, type TestEnv } from '../helpers/env.js';

const exec = promisify(execFile);
const MAIN_TS = path.join(PROJECT_ROOT, 'src/cli/main.ts');

/** Runs the CLI as a real process (TypeScript through tsx, so no build step is needed). */
async function cli(
  args: string[],
  dataDir: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', MAIN_TS, ...args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent' },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Runs main() in this process with captured output. */
async function inProcess(args: string[], dataDir: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env: { DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

async function withDb<T>(env: TestEnv, fn: (db: ReturnType<typeof openDatabase>['db']) => Promise<T>) {
  const opened = openDatabase(env.config.databaseUrl);
  try {
    await migrateToLatest(opened.db);
    return await fn(opened.db);
  } finally {
    await opened.close();
  }
}

let env: TestEnv;
beforeEach(async () => {
  env = await makeTestEnv('sqlite');
});
afterEach(async () => {
  await env.cleanup();
});

describe('pdfedit admin (separate process)', () => {
  it('creates a key that authenticates, then revokes it', async () => {
    const created = await cli(
      ['admin', 'create-key', '--email', 'Cli@Example.com', '--plan', 'starter'],
      env.config.dataDir,
    );
    expect(created.code).toBe(0);
    const lines = created.stdout.trimEnd().split('\n');
    const key = lines.at(-1) ?? '';
    expect(key).toMatch(/^sk_live_[0-9A-Za-z]{33}$/);
    expect(created.stdout.endsWith(`${key}\n`)).toBe(true);
    const principal = await withDb(env, (db) => authenticate(db, key));
    expect(principal).toMatchObject({ mode: 'live', plan: 'starter' });

    const revoked = await cli(['admin', 'revoke-key', key], env.config.dataDir);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).not.toContain(key); // the secret is not echoed back
    expect(await withDb(env, (db) => authenticate(db, key))).toBeUndefined();

    const again = await cli(['admin', 'revoke-key', key], env.config.dataDir);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no active key/);
  });

  it('prints usage on stderr and exits 2 for an unknown command', async () => {
    const res = await cli(['frobnicate'], env.config.dataDir);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/unknown command "frobnicate"/);
    expect(res.stderr).toMatch(/Usage: pdfedit <command>/);
  });
});

describe('pdfedit admin (in process)', () => {
  it('prints help on stdout with exit 0', async () => {
    for (const args of [['--help'], ['-h'], ['admin', '--help'], ['admin', 'create-key', '--help']]) {
      const res = await inProcess(args, env.config.dataDir);
      expect(res.code).toBe(0);
      expect(res.out).toMatch(/pdfedit admin create-key --email EMAIL --plan PLAN/);
    }
  });

  it('creates test keys with --mode test, revokes by id', async () => {
    const res = await inProcess(
      ['admin', 'create-key', '--email', 't@example.com', '--plan', 'free', '--mode', 'test'],
      env.config.dataDir,
    );
    expect(res.code).toBe(0);
    const key = res.out.split('\n').at(-1) ?? '';
    expect(key).toMatch(/^sk_test_/);
    const keyId = /key (key_[0-9A-Za-z]+)/.exec(res.out)?.[1];
    expect(keyId).toBeDefined();
    expect((await inProcess(['admin', 'revoke-key', keyId!], env.config.dataDir)).code).toBe(0);
    expect(await withDb(env, (db) => authenticate(db, key))).toBeUndefined();
  });

  it('prints the webhook secret of an account, and fails for an unknown email', async () => {
    await inProcess(
      ['admin', 'create-key', '--email', 'w@example.com', '--plan', 'free'],
      env.config.dataDir,
    );
    const res = await inProcess(['admin', 'webhook-secret', '--email', 'W@example.com'], env.config.dataDir);
    expect(res.code).toBe(0);
    expect(res.out).toMatch(/^whsec_[0-9A-Za-z]{33}$/);
    const missing = await inProcess(
      ['admin', 'webhook-secret', '--email', 'x@example.com'],
      env.config.dataDir,
    );
    expect(missing.code).toBe(1);
  });

  it('lifts a dispute hold from the account and says which', async () => {
    await inProcess(
      ['admin', 'create-key', '--email', 'h@example.com', '--plan', 'starter'],
      env.config.dataDir,
    );
    const hold = () =>
      withDb(env, (db) =>
        selfDb(db)
          .selectFrom('accounts')
          .select('hold_reason')
          .where('email', '=', 'h@example.com')
          .executeTakeFirstOrThrow(),
      );
    await withDb(env, (db) =>
      selfDb(db)
        .updateTable('accounts')
        .set({ hold_reason: 'payment dispute dp_1' })
        .where('email', '=', 'h@example.com')
        .execute(),
    );
    const res = await inProcess(['admin', 'release-hold', '--email', 'H@example.com'], env.config.dataDir);
    expect(res.code).toBe(0);
    expect(res.out).toMatch(/released from hold \(payment dispute dp_1\)/);
    expect((await hold()).hold_reason).toBeNull();
    const again = await inProcess(['admin', 'release-hold', '--email', 'h@example.com'], env.config.dataDir);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/has no hold/);
    const missing = await inProcess(
      ['admin', 'release-hold', '--email', 'x@example.com'],
      env.config.dataDir,
    );
    expect(missing.code).toBe(1);
    const usage = await inProcess(['admin', 'release-hold'], env.config.dataDir);
    expect(usage.code).toBe(2);
  });

  it('records the acceptance of the document-integrity terms on the account row', async () => {
    await inProcess(
      ['admin', 'create-key', '--email', 'g@example.com', '--plan', 'growth'],
      env.config.dataDir,
    );
    const row = () =>
      withDb(env, (db) =>
        db
          .selectFrom('accounts')
          .select(['terms_accepted_at', 'terms_version'])
          .where('email', '=', 'g@example.com')
          .executeTakeFirstOrThrow(),
      );
    const before = await row();
    expect(acceptedCurrentTerms(before)).toBe(false);
    const t0 = Date.now();
    const res = await inProcess(['admin', 'accept-terms', '--email', 'G@example.com'], env.config.dataDir);
    expect(res.code).toBe(0);
    expect(res.out).toContain(`accepted the document-integrity terms ${TERMS_VERSION}`);
    const after = await row();
    expect(after.terms_version).toBe(TERMS_VERSION);
    expect(Number(after.terms_accepted_at)).toBeGreaterThanOrEqual(t0);
    expect(acceptedCurrentTerms(after)).toBe(true);
    const missing = await inProcess(
      ['admin', 'accept-terms', '--email', 'x@example.com'],
      env.config.dataDir,
    );
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/no account for x@example.com/);
  });

  it.each([
    [['admin', 'accept-terms'], /accept-terms needs --email/],
    [[], /no command given/],
    [['admin'], /admin needs a command/],
    [['admin', 'nope'], /unknown admin command "nope"/],
    [['admin', 'create-key', '--plan', 'free'], /needs --email/],
    [['admin', 'create-key', '--email', 'a@example.com'], /needs --plan/],
    [['admin', 'create-key', '--email', 'a@example.com', '--plan', 'gold'], /needs --plan, one of free/],
    [
      ['admin', 'create-key', '--email', 'a@example.com', '--plan', 'free', '--mode', 'prod'],
      /--mode must be/,
    ],
    [['admin', 'create-key', '--email', 'not-an-email', '--plan', 'free'], /not a valid email/],
    [
      ['admin', 'create-key', '--email', 'a@example.com', '--plan', 'free', '--bogus'],
      /Unknown option '--bogus'/,
    ],
    [['admin', 'revoke-key'], /exactly one KEY_OR_ID/],
    [['admin', 'revoke-key', 'a', 'b'], /exactly one KEY_OR_ID/],
  ])('%j is a usage error (exit 2)', async (args, message) => {
    const res = await inProcess(args, env.config.dataDir);
    expect(res.code).toBe(2);
    expect(res.out).toBe('');
    expect(res.err).toMatch(message);
  });
});

describe('bin/pdfedit.js', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('asks for a build when dist/ is missing', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'pdfedit-bin-'));
    mkdirSync(path.join(dir, 'bin'));
    copyFileSync(path.join(PROJECT_ROOT, 'bin/pdfedit.js'), path.join(dir, 'bin/pdfedit.js'));
    copyFileSync(path.join(PROJECT_ROOT, 'package.json'), path.join(dir, 'package.json')); // "type": "module"
    const res = await exec(process.execPath, [path.join(dir, 'bin/pdfedit.js'), '--help']).catch((e) => e);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/run npm run build first/);
  });
});

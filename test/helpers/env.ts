import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type Config, loadConfig, PROJECT_ROOT } from '../../src/config.js';

/** Where the shared real-world corpus lives (beside the repository, never inside it);
 * PDFEDIT_CORPUS_DIR points elsewhere (a worktree whose parent has no shared/). */
export const CORPUS_DIR =
  process.env.PDFEDIT_CORPUS_DIR || path.resolve(PROJECT_ROOT, '..', 'shared', 'corpus');
export const HAVE_CORPUS = existsSync(path.join(CORPUS_DIR, 'manifest.json'));
export const PG_ADMIN_URL = process.env.TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

export type DbKind = 'sqlite' | 'postgres';
export const DB_KINDS: DbKind[] = ['sqlite', 'postgres'];

export interface TestEnv {
  config: Config;
  cleanup: () => Promise<void>;
}

/**
 * A private configuration for one test file: its own DATA_DIR under the system temp
 * folder and, for postgres, its own freshly created database that cleanup drops.
 */
export async function makeTestEnv(
  kind: DbKind = 'sqlite',
  env: Record<string, string> = {},
): Promise<TestEnv> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'pdfedit-test-'));
  let databaseUrl: string | undefined;
  let dropDb: (() => Promise<void>) | undefined;
  if (kind === 'postgres') {
    const name = `pdfedit_t_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    dropDb = async () => {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    };
  }
  const config = loadConfig({
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: 'http://127.0.0.1:8080',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL || 'silent',
    // Suites send many requests with one key; the rate-limit tests pass RATE_LIMIT_FACTOR=1.
    RATE_LIMIT_FACTOR: '1000',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...env,
  });
  return {
    config,
    cleanup: async () => {
      if (dropDb) await dropDb();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

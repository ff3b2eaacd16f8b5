import { mkdirSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, type MigrationResult, Migrator, PostgresDialect } from 'kysely';
import pg from 'pg';
import { MIGRATIONS } from './migrations/index.js';
import type { Database } from './schema.js';
import { CachedStatements, ImmediateSqliteDialect } from './sqlite-dialect.js';

export type DbKind = 'sqlite' | 'postgres';

export interface OpenDatabase {
  db: Kysely<Database>;
  kind: DbKind;
  /** Closes the pool or file; safe to call more than once. */
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Errors of idle PostgreSQL connections (server restart, network): the pool drops the
   * connection and the next query opens a new one, so these are reported, not thrown. */
  onPoolError?: (err: Error) => void;
}

/** How long a writer waits for another process's SQLite write lock before SQLITE_BUSY. */
const SQLITE_BUSY_TIMEOUT_MS = 10_000;
/** A PostgreSQL that does not accept a connection within this is reported as down. */
const PG_CONNECT_TIMEOUT_MS = 5_000;
const PG_INT8_OID = 20;

/** Opens `sqlite:<path>` or `postgres://…` (also `postgresql://…`). */
export function openDatabase(databaseUrl: string, opts: OpenOptions = {}): OpenDatabase {
  if (databaseUrl.startsWith('sqlite:')) return openSqlite(databaseUrl.slice('sqlite:'.length));
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return openPostgres(databaseUrl, opts);
  throw new Error('DATABASE_URL must be sqlite:<path> or a postgres:// URL');
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= fn();
    return closing;
  };
}

function openSqlite(file: string): OpenDatabase {
  if (file === '') throw new Error('DATABASE_URL sqlite: needs a file path');
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  // The busy timeout first: switching to WAL itself needs a lock another process may hold.
  const sqlite = new BetterSqlite3(file, { timeout: SQLITE_BUSY_TIMEOUT_MS });
  // WAL: readers never block the writer and vice versa. NORMAL sync is durable across
  // process crashes in WAL mode (only an OS crash may lose the last commits).
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  // Off by default in SQLite; without it the REFERENCES clauses are decoration.
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ database: new CachedStatements(sqlite) }),
  });
  return { db, kind: 'sqlite', close: once(() => db.destroy()) };
}

/** int8 (bigint, count(*)) as a JS number: our int8 values are epoch ms and counts, far
 * below 2^53; anything larger would be a bug, so it fails loudly instead of rounding. */
function parseInt8(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`int8 value ${value} is outside the safe integer range`);
  return n;
}

function openPostgres(url: string, opts: OpenOptions): OpenDatabase {
  // Per-pool type parsers rather than pg.types.setTypeParser: no global side effect on
  // other pg users in the same process.
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === PG_INT8_OID && format !== 'binary'
        ? parseInt8
        : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
  };
  const pool = new pg.Pool({ connectionString: url, types, connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS });
  pool.on('error', (err) => opts.onPoolError?.(err));
  // A connection that dies while checked out (PostgreSQL restarted between two statements of
  // a transaction) emits 'error' on its client, where the pool's idle listener is not
  // attached: unheard, that event ended the whole process. The error reaches the holder
  // through its next query, and the pool drops the dead client when it is released.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, kind: 'postgres', close: once(() => db.destroy()) };
}

/**
 * Brings the schema to the latest migration. Safe when several processes start at once:
 * on PostgreSQL Kysely holds an advisory lock, on SQLite the migration transaction holds
 * the database write lock (see sqlite-dialect.ts); the late process finds nothing to do.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<MigrationResult[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(
      `database migration ${failed ?? ''} failed: ${String((error as Error)?.message ?? error)}`,
      {
        cause: error,
      },
    );
  }
  return results ?? [];
}

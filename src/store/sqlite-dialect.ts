import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  SqliteAdapter,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  type SqliteStatement,
} from 'kysely';

/**
 * The database as Kysely's SQLite driver uses it, with each statement prepared once per
 * SQL text: Kysely prepares every query it runs afresh, and on an edit's answer (a dozen
 * statements, the same texts every time) preparing was measured at about 0.8 ms of
 * the main thread, more than running them. A statement that is mid-iteration (a streamed
 * query) is busy and cannot run again: such a call gets a fresh one. Oldest out past `max`.
 */
export class CachedStatements implements SqliteDatabase {
  private readonly statements = new Map<string, BetterSqlite3.Statement>();

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly max = 256,
  ) {}

  prepare(sql: string): SqliteStatement {
    const hit = this.statements.get(sql);
    if (hit && !hit.busy) return hit as SqliteStatement;
    const stmt = this.db.prepare(sql);
    if (!hit) {
      this.statements.set(sql, stmt);
      if (this.statements.size > this.max) {
        const oldest = this.statements.keys().next().value;
        if (oldest !== undefined) this.statements.delete(oldest);
      }
    }
    return stmt as SqliteStatement;
  }

  close(): void {
    this.statements.clear();
    this.db.close();
  }
}

/**
 * Kysely's SQLite dialect with two changes that matter once several processes share one
 * database file (two servers starting, the CLI beside a running server):
 *
 * - Transactions start with `BEGIN IMMEDIATE`. A plain (deferred) `BEGIN` takes the write
 *   lock only at the first write; if another process wrote in between, SQLite answers
 *   SQLITE_BUSY at once and busy_timeout does not help. IMMEDIATE waits for the lock up
 *   front (honouring busy_timeout), so transactions serialise instead of failing.
 * - The adapter reports transactional DDL (SQLite has it). Kysely's Migrator then runs all
 *   pending migrations inside one such transaction: the write lock is the migration lock,
 *   and the second process reads the migration table only after the first committed.
 *   Stock Kysely runs SQLite migrations without any cross-process lock.
 */
export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

import {
  CompiledQuery,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  SqliteAdapter,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';

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

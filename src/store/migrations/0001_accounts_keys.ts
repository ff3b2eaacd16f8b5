import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';

/**
 * Accounts and their API keys. Written with the schema builder only, so the same
 * migration runs on SQLite and PostgreSQL; `bigint` holds epoch milliseconds in both
 * (SQLite gives it INTEGER affinity).
 */
export const accountsAndKeys: Migration = {
  // `Kysely<any>`: a migration must keep compiling after the Database interface moves on.
  // biome-ignore lint/suspicious/noExplicitAny: see above
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('accounts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('plan', 'text', (c) => c.notNull())
      .addColumn('webhook_secret', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
      .addColumn('prefix', 'text', (c) => c.notNull())
      // Unique: the lookup of every authenticated request goes through this index.
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .addColumn('last_used_at', 'bigint')
      .execute();

    await db.schema.createIndex('api_keys_account_id_idx').on('api_keys').column('account_id').execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up()
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('api_keys').execute();
    await db.schema.dropTable('accounts').execute();
  },
};

import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';

/**
 * Idempotency records (SPEC "POST /v1/edit", Idempotency). The primary key (scope, key)
 * is the lock: of two requests with one key exactly one insert succeeds and runs the work.
 * `scope` is `<account>:<mode>` or `keyless:<address group>`, so keys never cross
 * accounts or key modes.
 */
export const idempotency: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration must not follow the Database interface
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('idempotency_records')
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('route', 'text', (c) => c.notNull())
      .addColumn('body_hash', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('running', 'done')`))
      // Random token of the process running the work; a finish only lands for its owner.
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'bigint', (c) => c.notNull())
      .addColumn('response_status', 'integer')
      .addColumn('response_headers', 'text')
      .addColumn('response_body', 'text')
      .addColumn('response_encoding', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_records_pk', ['scope', 'key'])
      .execute();
    await db.schema
      .createIndex('idempotency_records_expires_idx')
      .on('idempotency_records')
      .column('expires_at')
      .execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up()
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('idempotency_records').execute();
  },
};

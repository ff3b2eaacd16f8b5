import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';

/**
 * Uploads, outputs and previews (SPEC "Retention"). The bytes live in the blob store; a
 * row says whose they are, what they are and until when. `parent_id` has no foreign key:
 * rows are soft-deleted (deleted_at) and a sweep may remove parents and children in any order.
 */
export const files: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration must not follow the Database interface
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('files')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('upload', 'output', 'preview')`))
      .addColumn('parent_id', 'text')
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('reserved', 'stored')`))
      .addColumn('blob_key', 'text')
      .addColumn('max_bytes', 'bigint', (c) => c.notNull())
      .addColumn('size', 'bigint')
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('sha256', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('deleted_at', 'bigint')
      .execute();
    await db.schema.createIndex('files_account_id_idx').on('files').column('account_id').execute();
    await db.schema.createIndex('files_parent_id_idx').on('files').column('parent_id').execute();
    // The retention sweep walks files by expiry.
    await db.schema.createIndex('files_expires_at_idx').on('files').column('expires_at').execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up()
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('files').execute();
  },
};

import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';

/**
 * Metering (SPEC "Limits", billing unit). `usage_charges` is the ledger: one row per piece
 * of work, and the primary key (subject, mode, work_id) is what makes a second charge for
 * the same request or job impossible, whatever races. `subject` is an account id, or
 * `ip:<address group>` for keyless use, so there is no foreign key. Each row records how
 * its pages were covered (allowance, credit packs, overage) at the moment of the charge.
 * `credit_grants` holds bought credit packs; they never expire.
 */
export const billing: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration must not follow the Database interface
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('usage_charges')
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test', 'keyless')`))
      .addColumn('work_id', 'text', (c) => c.notNull())
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('pages', 'integer', (c) => c.notNull())
      .addColumn('ocr_pages', 'integer', (c) => c.notNull())
      .addColumn('billed', 'integer', (c) => c.notNull())
      .addColumn('allowance_pages', 'integer', (c) => c.notNull())
      .addColumn('credit_pages', 'integer', (c) => c.notNull())
      .addColumn('overage_pages', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('usage_charges_pk', ['subject', 'mode', 'work_id'])
      .execute();
    await db.schema
      .createIndex('usage_charges_period_idx')
      .on('usage_charges')
      .columns(['subject', 'mode', 'period'])
      .execute();
    await db.schema
      .createTable('credit_grants')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('pack', 'text', (c) => c.notNull())
      .addColumn('pages', 'integer', (c) => c.notNull())
      // The payment event (or admin action) that granted it: applied once.
      .addColumn('reference', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('credit_grants_account_idx')
      .on('credit_grants')
      .column('account_id')
      .execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up()
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('credit_grants').execute();
    await db.schema.dropTable('usage_charges').execute();
  },
};

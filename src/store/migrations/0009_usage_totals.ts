import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Running totals of the usage ledger per subject, mode and period (issue 18 item 5): the
 * quota check and the charge of every edit read the period's usage, and summing the
 * ledger's rows made each read grow with the month's edits (4.7 ms at 10,000 charges,
 * measured on SQLite, twice per edit). `charge` adds each ledger row to its period's total
 * in the same transaction, so the two never disagree; the ledger stays the record (one
 * row per piece of work, as invoicing and the account page read it).
 */
export const usageTotals: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration must not follow the Database interface
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('usage_totals')
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('billed', 'integer', (c) => c.notNull())
      .addColumn('allowance_pages', 'integer', (c) => c.notNull())
      .addColumn('credit_pages', 'integer', (c) => c.notNull())
      .addColumn('overage_pages', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('usage_totals_pk', ['subject', 'mode', 'period'])
      .execute();
    // What was charged before this migration.
    await sql`insert into usage_totals (subject, mode, period, billed, allowance_pages, credit_pages, overage_pages)
      select subject, mode, period, sum(billed), sum(allowance_pages), sum(credit_pages), sum(overage_pages)
      from usage_charges group by subject, mode, period`.execute(db);
  },
  // biome-ignore lint/suspicious/noExplicitAny: a migration must not follow the Database interface
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('usage_totals').execute();
  },
};

import type { Kysely, Migration } from 'kysely';

/**
 * How many times each batch record was claimed (issue 21): a record that fails on an
 * internal (untyped) error is retried like an edit job, at most MAX_ATTEMPTS times, then
 * ends as a failed record with engine_error instead of re-running for ever.
 */
export const recordAttempts: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration must not follow the Database interface
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .alterTable('job_records')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
  // biome-ignore lint/suspicious/noExplicitAny: a migration must not follow the Database interface
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('job_records').dropColumn('attempts').execute();
  },
};

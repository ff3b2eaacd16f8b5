import type { Kysely, Migration } from 'kysely';

/**
 * Document-integrity terms (SPEC rule 12): when an account accepted them, and which
 * version. Accepting them is what lets a Growth or Scale account send `watermark: off` on a
 * flagged document. Both stay null until the account accepts; a new version of the terms
 * asks again (the version accepted is compared with the current one).
 */
export const terms: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration must not follow the Database interface
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('accounts').addColumn('terms_accepted_at', 'bigint').execute();
    await db.schema.alterTable('accounts').addColumn('terms_version', 'text').execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up()
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('accounts').dropColumn('terms_version').execute();
    await db.schema.alterTable('accounts').dropColumn('terms_accepted_at').execute();
  },
};

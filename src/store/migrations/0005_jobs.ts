import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';

/**
 * Jobs (async edits and batches), the records of a batch, and outbound webhook
 * deliveries. The database is the source of truth of every job: the queue (BullMQ or the
 * in-process one) only rings the bell, so a lost Redis or a killed worker loses nothing.
 * Ownership is a lease (`owner`, `lease_until`), renewed while work runs; an expired lease
 * lets another worker resume.
 */
export const jobs: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration must not follow the Database interface
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
      .addColumn('plan', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('edit', 'batch')`))
      .addColumn('status', 'text', (c) =>
        c.notNull().check(sql`status in ('queued', 'running', 'done', 'partial', 'failed')`),
      )
      // What the runner needs: input file, edits, options (JSON). The password is removed
      // when the job finishes.
      .addColumn('request', 'text', (c) => c.notNull())
      .addColumn('webhook_url', 'text')
      .addColumn('owner', 'text')
      .addColumn('lease_until', 'bigint', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('progress_total', 'integer', (c) => c.notNull())
      .addColumn('pages_billed', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('changes_count', 'integer', (c) => c.notNull().defaultTo(0))
      // The finished body (edit result, or a batch's summary; records live in job_records).
      .addColumn('result', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('started_at', 'bigint')
      .addColumn('finished_at', 'bigint')
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('jobs_account_created_idx')
      .on('jobs')
      .columns(['account_id', 'mode', 'created_at', 'id'])
      .execute();
    await db.schema
      .createIndex('jobs_status_lease_idx')
      .on('jobs')
      .columns(['status', 'lease_until'])
      .execute();
    await db.schema.createIndex('jobs_expires_idx').on('jobs').column('expires_at').execute();

    await db.schema
      .createTable('job_records')
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('idx', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) =>
        c.notNull().check(sql`status in ('pending', 'running', 'done', 'partial', 'failed')`),
      )
      .addColumn('vals', 'text', (c) => c.notNull())
      .addColumn('owner', 'text')
      .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('pages_billed', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('changes_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('result', 'text')
      .addPrimaryKeyConstraint('job_records_pk', ['job_id', 'idx'])
      .execute();
    await db.schema
      .createIndex('job_records_claim_idx')
      .on('job_records')
      .columns(['job_id', 'status', 'idx'])
      .execute();

    await db.schema
      .createTable('webhook_deliveries')
      // `msg_…`: the webhook-id header, the same on every attempt.
      .addColumn('id', 'text', (c) => c.primaryKey())
      // One delivery per job: the unique key makes a re-run finish enqueue nothing more.
      .addColumn('job_id', 'text', (c) => c.notNull().unique().references('jobs.id').onDelete('cascade'))
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('pending', 'delivered', 'failed')`))
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('owner', 'text')
      .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('last_status', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('webhook_deliveries_due_idx')
      .on('webhook_deliveries')
      .columns(['state', 'next_attempt_at'])
      .execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up()
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('webhook_deliveries').execute();
    await db.schema.dropTable('job_records').execute();
    await db.schema.dropTable('jobs').execute();
  },
};

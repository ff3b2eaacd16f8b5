import type { ExpressionBuilder, Kysely } from 'kysely';
import { jobsDb } from '../domain/jobs.js';
import type { JobRecordRow, JobRow, JobsSchema } from '../store/jobs-schema.js';
import type { Database } from '../store/schema.js';

/**
 * Ownership of running work, in the database. A claim is a conditional update (of two
 * workers exactly one wins); the owner renews its lease while it works; an expired lease
 * (the owner was killed) is claimable again. Time is the service clock.
 */
type Db = Kysely<Database>;

/** An edit job: queued, or running under an expired lease. */
export async function claimEditJob(db: Db, id: string, owner: string, now: number, leaseMs: number) {
  const r = await jobsDb(db)
    .updateTable('jobs')
    .set((eb) => ({
      status: 'running',
      owner,
      lease_until: now + leaseMs,
      attempts: eb('attempts', '+', 1),
      started_at: eb.fn.coalesce('started_at', eb.val(now)),
    }))
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('status', '=', 'queued'),
        eb.and([eb('status', '=', 'running'), eb('lease_until', '<=', now)]),
      ]),
    )
    .executeTakeFirst();
  if (r.numUpdatedRows === 0n) return undefined;
  return jobsDb(db).selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A batch is shared: every shard marks it running and renews its lease (no owner). */
export async function joinBatch(
  db: Db,
  id: string,
  now: number,
  leaseMs: number,
): Promise<JobRow | undefined> {
  const r = await jobsDb(db)
    .updateTable('jobs')
    .set((eb) => ({
      status: 'running',
      lease_until: now + leaseMs,
      started_at: eb.fn.coalesce('started_at', eb.val(now)),
    }))
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirst();
  if (r.numUpdatedRows === 0n) return undefined;
  return jobsDb(db).selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Up to `max` records nobody holds (pending, or running under an expired lease), the
 * lowest first, claimed in one statement and returned in index order. Empty when none is
 * left. Two claimers never get the same record: the update re-checks each row's status (in
 * PostgreSQL after waiting for a concurrent claimer's row lock), so a claimer that lost
 * every candidate to another gets none and asks again.
 */
export async function claimRecords(
  db: Db,
  jobId: string,
  owner: string,
  now: number,
  leaseMs: number,
  max: number,
): Promise<JobRecordRow[]> {
  const claimable = (eb: ExpressionBuilder<JobsSchema, 'job_records'>) =>
    eb.or([
      eb('status', '=', 'pending'),
      eb.and([eb('status', '=', 'running'), eb('lease_until', '<=', now)]),
    ]);
  for (let tries = 0; tries < 20; tries++) {
    const rows = await jobsDb(db)
      .updateTable('job_records')
      .set((eb) => ({
        status: 'running',
        owner,
        lease_until: now + leaseMs,
        attempts: eb('attempts', '+', 1),
      }))
      .where('job_id', '=', jobId)
      .where('idx', 'in', (eb) =>
        eb
          .selectFrom('job_records')
          .select('idx')
          .where('job_id', '=', jobId)
          .where(claimable)
          .orderBy('idx')
          .limit(Math.max(1, max)),
      )
      .where(claimable)
      // The claimed rows in the same statement (SQLite 3.35+ and PostgreSQL both return them).
      .returningAll()
      .execute();
    if (rows.length > 0) return rows.sort((x, y) => x.idx - y.idx);
    const left = await jobsDb(db)
      .selectFrom('job_records')
      .select('idx')
      .where('job_id', '=', jobId)
      .where(claimable)
      .limit(1)
      .executeTakeFirst();
    if (!left) return [];
  }
  return [];
}

/**
 * Gives records `owner` claimed but never started back (a shard stopping with records in
 * hand): pending again, their claim not counted as an attempt, claimable at once.
 */
export async function unclaimRecords(db: Db, jobId: string, owner: string, idxs: number[]): Promise<void> {
  if (idxs.length === 0) return;
  await jobsDb(db)
    .updateTable('job_records')
    .set((eb) => ({ status: 'pending', owner: null, lease_until: 0, attempts: eb('attempts', '-', 1) }))
    .where('job_id', '=', jobId)
    .where('owner', '=', owner)
    .where('status', '=', 'running')
    .where('idx', 'in', idxs)
    .execute();
}

/** Renews every lease `owner` holds (its job and its current record). */
export async function renew(
  db: Db,
  jobId: string,
  owner: string,
  now: number,
  leaseMs: number,
): Promise<void> {
  await jobsDb(db)
    .updateTable('jobs')
    .set({ lease_until: now + leaseMs })
    .where('id', '=', jobId)
    .where('status', '=', 'running')
    .where((eb) => eb.or([eb('owner', '=', owner), eb('kind', '=', 'batch')]))
    .execute();
  await jobsDb(db)
    .updateTable('job_records')
    .set({ lease_until: now + leaseMs })
    .where('job_id', '=', jobId)
    .where('owner', '=', owner)
    .where('status', '=', 'running')
    .execute();
}

/** Gives up what `owners` hold (SIGTERM past its grace): others may take it at once. */
export async function release(db: Db, owners: string[]): Promise<void> {
  if (owners.length === 0) return;
  await jobsDb(db)
    .updateTable('jobs')
    .set({ lease_until: 0 })
    .where('owner', 'in', owners)
    .where('status', '=', 'running')
    .execute();
  await jobsDb(db)
    .updateTable('job_records')
    .set({ lease_until: 0 })
    .where('owner', 'in', owners)
    .where('status', '=', 'running')
    .execute();
}

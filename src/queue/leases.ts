import type { ExpressionBuilder, Kysely } from 'kysely';
import { jobsDb } from '../domain/jobs.js';
import type { JobRecordRow, JobRow, JobsSchema } from '../store/jobs-schema.js';
import { prepared } from '../store/prepared.js';
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
  const values: ClaimValues = {
    jobId,
    owner,
    now,
    leaseUntil: now + leaseMs,
    max: Math.max(1, max),
    pending: 'pending',
    running: 'running',
    one: 1,
  };
  for (let tries = 0; tries < 20; tries++) {
    const rows = await claimStatement.rows(db, values);
    if (rows.length > 0) return rows.sort((x, y) => x.idx - y.idx);
    const left = await jobsDb(db)
      .selectFrom('job_records')
      .select('idx')
      .where('job_id', '=', jobId)
      .where(claimable(values))
      .limit(1)
      .executeTakeFirst();
    if (!left) return [];
  }
  return [];
}

/** The values of the claim statement (the constants too: `prepared` binds only named values). */
export type ClaimValues = {
  jobId: string;
  owner: string;
  now: number;
  leaseUntil: number;
  max: number;
  pending: 'pending';
  running: 'running';
  one: 1;
};

/** A record nobody holds: pending, or running under a lease that ended by `now`. */
const claimable =
  (v: Pick<ClaimValues, 'now' | 'pending' | 'running'>) =>
  (eb: ExpressionBuilder<JobsSchema, 'job_records'>) =>
    eb.or([
      eb('status', '=', v.pending),
      eb.and([eb('status', '=', v.running), eb('lease_until', '<=', v.now)]),
    ]);

/**
 * The claim itself, compiled once (src/store/prepared.ts): a batch runs it every few
 * records, and Kysely building and compiling this update with its subquery cost about a
 * quarter of a millisecond of the worker's main thread each time (profile of the batch
 * bench), a fifth of its CPU per record.
 */
const claimStatement = prepared<ClaimValues, JobRecordRow>(
  ['jobId', 'owner', 'now', 'leaseUntil', 'max', 'pending', 'running', 'one'],
  (db, v) => claimQuery(db, v),
);

/** The claim update with these values (exported for its query-plan test). */
export function claimQuery(db: Db, v: ClaimValues) {
  return (
    jobsDb(db)
      .updateTable('job_records')
      .set((eb) => ({
        status: v.running,
        owner: v.owner,
        lease_until: v.leaseUntil,
        attempts: eb('attempts', '+', v.one),
      }))
      .where('job_id', '=', v.jobId)
      // The lowest pending records and the lowest expired ones, each read in index order
      // from job_records_claim_idx (job_id, status, idx), then the lowest of both. One
      // subquery with `status = pending or (running and expired)` ordered by idx walked
      // the primary key from the batch's first record, past every finished one: a claim
      // cost grew with the records done (300 done: ~0.3 ms; quadratic over a batch).
      .where('idx', 'in', (eb) =>
        eb
          .selectFrom(
            eb
              .selectFrom('job_records')
              .select('idx')
              .where('job_id', '=', v.jobId)
              .where('status', '=', v.pending)
              .orderBy('idx')
              .limit(v.max)
              .as('p'),
          )
          .select('p.idx')
          .unionAll(
            eb
              .selectFrom(
                eb
                  .selectFrom('job_records')
                  .select('idx')
                  .where('job_id', '=', v.jobId)
                  .where('status', '=', v.running)
                  .where('lease_until', '<=', v.now)
                  .orderBy('idx')
                  .limit(v.max)
                  .as('r'),
              )
              .select('r.idx'),
          )
          .orderBy('idx')
          .limit(v.max),
      )
      .where(claimable(v))
      // The claimed rows in the same statement (SQLite 3.35+ and PostgreSQL both return them).
      .returningAll()
  );
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

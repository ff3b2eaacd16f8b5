import type { Kysely } from 'kysely';
import { jobBody, jobsDb, parseRequest } from '../domain/jobs.js';
import { enqueueJobDone } from '../net/webhooks.js';
import type { JobRow, JobStatus } from '../store/jobs-schema.js';
import type { Database } from '../store/schema.js';

export interface Finish {
  status: Exclude<JobStatus, 'queued' | 'running'>;
  /** The finished body without the job fields (a sync edit's body; a batch's summary). */
  result: Record<string, unknown>;
  pagesBilled: number;
  changesCount: number;
}

/**
 * running → done | partial | failed, once: the update is conditional on the job being
 * unfinished (and, for an edit job, on this owner), and the webhook delivery is queued in
 * the same transaction, so a crash cannot finish a job without its event or send two.
 * The document password is dropped from the stored request: the job no longer needs it.
 */
export async function finishJob(
  db: Kysely<Database>,
  row: JobRow,
  owner: string | null,
  f: Finish,
  now: number,
): Promise<boolean> {
  const request = { ...parseRequest(row), password: null };
  return db.transaction().execute(async (trx) => {
    let q = jobsDb(trx)
      .updateTable('jobs')
      .set({
        status: f.status,
        result: JSON.stringify(f.result),
        pages_billed: f.pagesBilled,
        changes_count: f.changesCount,
        finished_at: now,
        owner: null,
        lease_until: 0,
        request: JSON.stringify(request),
      })
      .where('id', '=', row.id)
      .where('status', 'in', ['queued', 'running']);
    if (owner !== null) q = q.where('owner', '=', owner);
    const r = await q.executeTakeFirst();
    if (r.numUpdatedRows === 0n) return false;
    if (row.webhook_url) {
      const done = await jobsDb(trx)
        .selectFrom('jobs')
        .selectAll()
        .where('id', '=', row.id)
        .executeTakeFirstOrThrow();
      const body = await jobBody(trx, done);
      await enqueueJobDone(trx, { id: row.id, accountId: row.account_id, url: row.webhook_url }, body, now);
    }
    return true;
  });
}

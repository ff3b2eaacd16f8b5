import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { AccountPlan } from '../billing/plans.js';
import { ApiError } from '../kernel/api-error.js';
import { randomBase62 } from '../kernel/random-token.js';
import { precheckUrl } from '../net/safe-fetch.js';
import type { Edit, EditOptions } from '../schemas/edit.js';
import { readBlobBytes } from '../store/blob-bytes.js';
import type { JobKind, JobRecordRow, JobRow, JobStatus, JobsSchema } from '../store/jobs-schema.js';
import type { Database } from '../store/schema.js';
import { createStoredFile, type FileOwner, findFileById } from './files.js';

/**
 * Jobs as the API sees them (SPEC "States", API-DECISIONS "GET /v1/jobs"): created by
 * POST /v1/edit (async) and POST /v1/batch, read by GET /v1/jobs[/{id}]. Running them is
 * src/queue/'s business; the row is the source of truth for both.
 */

export const JOB_STATUSES: readonly JobStatus[] = ['queued', 'running', 'done', 'partial', 'failed'];
export const FINISHED: ReadonlySet<JobStatus> = new Set(['done', 'partial', 'failed']);

type Db = Kysely<Database>;
export const jobsDb = (db: Db) => db.withTables<JobsSchema>();

/** What a runner needs to do the job again from scratch (stored as JSON in `request`). */
export interface JobRequest {
  /** The document (an edit's source, a batch's template), copied when the job was queued,
   * so deleting the caller's file afterwards cannot pull it from under the job. */
  input_file_id: string;
  /** The caller's file the document came from, when it was a file_id: outputs derive from it. */
  source_file_id: string | null;
  password: string | null;
  page_count: number;
  edits: Edit[];
  options: EditOptions | null;
}

export interface NewJob {
  owner: FileOwner;
  plan: AccountPlan;
  kind: JobKind;
  pdf: Buffer;
  password: string | undefined;
  pageCount: number;
  sourceFileId: string | undefined;
  edits: Edit[];
  options: EditOptions | undefined;
  /** Batch only: one values object per record. */
  records?: Record<string, unknown>[];
}

type Services = Pick<FastifyInstance, 'config' | 'db' | 'blobs'>;

export function newJobId(): string {
  return `job_${randomBase62(16)}`;
}

/**
 * `options.webhook_url`: an absolute http(s) URL without credentials, refused at request
 * time (400) when the address policy refuses it without DNS (an IP literal, a local name).
 * Where a name points is checked again at every delivery attempt, at connect time, so a
 * name cannot be re-pointed to a private address later.
 */
export function checkWebhookUrl(url: string | undefined, allowPrivate: boolean): string | null {
  if (url === undefined) return null;
  return precheckUrl('options.webhook_url', url, allowPrivate).toString();
}

/** Rows inserted per statement (SQLite caps the bound variables of one statement). */
const RECORD_CHUNK = 400;

/** Stores the input document and the job (and a batch's records) as `queued`. */
export async function createJob(svc: Services, job: NewJob): Promise<JobRow> {
  const { db, blobs, config } = svc;
  const webhookUrl = checkWebhookUrl(job.options?.webhook_url, config.allowPrivateUrls);
  const now = config.now();
  const input = await createStoredFile(db, blobs, job.owner, {
    kind: 'upload',
    contentType: 'application/pdf',
    ttlMs: config.fileTtlMs,
    // Not derived from the caller's file: deleting that file must not delete the job's copy.
    parentId: null,
    bytes: job.pdf,
    now,
  });
  const request: JobRequest = {
    input_file_id: input.id,
    source_file_id: job.sourceFileId ?? null,
    password: job.password ?? null,
    page_count: job.pageCount,
    edits: job.edits,
    options: job.options ?? null,
  };
  const row: JobRow = {
    id: newJobId(),
    account_id: job.owner.accountId,
    mode: job.owner.mode,
    plan: job.plan,
    kind: job.kind,
    status: 'queued',
    request: JSON.stringify(request),
    webhook_url: webhookUrl,
    owner: null,
    // Claimable at once; the reconciler rings again only after this passes unclaimed.
    lease_until: now + config.jobs.leaseMs,
    attempts: 0,
    progress_total: job.kind === 'batch' ? (job.records?.length ?? 0) : job.pageCount,
    pages_billed: 0,
    changes_count: 0,
    result: null,
    created_at: now,
    started_at: null,
    finished_at: null,
    expires_at: now + config.jobs.retentionMs,
  };
  await db.transaction().execute(async (trx) => {
    await jobsDb(trx).insertInto('jobs').values(row).execute();
    const records = job.records ?? [];
    for (let i = 0; i < records.length; i += RECORD_CHUNK) {
      await jobsDb(trx)
        .insertInto('job_records')
        .values(
          records.slice(i, i + RECORD_CHUNK).map((vals, k) => ({
            job_id: row.id,
            idx: i + k,
            status: 'pending' as const,
            vals: JSON.stringify(vals),
            owner: null,
            lease_until: 0,
            pages_billed: 0,
            changes_count: 0,
            result: null,
          })),
        )
        .execute();
    }
  });
  return row;
}

export function parseRequest(row: Pick<JobRow, 'request'>): JobRequest {
  return JSON.parse(row.request) as JobRequest;
}

/** The bytes of the job's input document, or undefined when retention removed them. */
export async function readJobInput(svc: Services, request: JobRequest): Promise<Buffer | undefined> {
  const file = await findFileById(svc.db, request.input_file_id, svc.config.now());
  if (!file?.blob_key) return undefined;
  return readBlobBytes(svc.blobs, file.blob_key);
}

/** A job of this owner (account and key mode), else undefined: other accounts' and the
 * other mode's jobs do not exist for the caller. */
export async function findJob(
  db: Db,
  owner: FileOwner,
  id: string,
  now: number,
): Promise<JobRow | undefined> {
  const row = await jobsDb(db)
    .selectFrom('jobs')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', owner.accountId)
    .where('mode', '=', owner.mode)
    .executeTakeFirst();
  return row && row.expires_at > now ? row : undefined;
}

/** Records of a batch that have finished (any outcome). */
export async function finishedRecordCount(db: Db, jobId: string): Promise<number> {
  const r = await jobsDb(db)
    .selectFrom('job_records')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('job_id', '=', jobId)
    .where('status', 'in', ['done', 'partial', 'failed'])
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A job list entry (API-DECISIONS: job_id, status, kind, timings, pages_billed, changes_count, progress). */
export function jobEntry(row: JobRow, progressDone: number) {
  return {
    job_id: row.id,
    status: row.status,
    kind: row.kind,
    created_at: iso(row.created_at) as string,
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
    pages_billed: row.pages_billed,
    changes_count: row.changes_count,
    progress: {
      done: FINISHED.has(row.status) ? row.progress_total : progressDone,
      total: row.progress_total,
    },
  };
}

/** GET /v1/jobs/{id}: the entry, plus the finished body (a sync edit's, plus records[] for a batch). */
export async function jobBody(
  db: Db,
  row: JobRow,
): Promise<ReturnType<typeof jobEntry> & Record<string, unknown>> {
  const done = row.kind === 'batch' && !FINISHED.has(row.status) ? await finishedRecordCount(db, row.id) : 0;
  const entry = jobEntry(row, done);
  if (!FINISHED.has(row.status) || row.result === null) return entry;
  const result = JSON.parse(row.result) as Record<string, unknown>;
  const body: ReturnType<typeof jobEntry> & Record<string, unknown> = { ...result, ...entry };
  if (row.kind === 'batch') body.records = await batchRecords(db, row.id);
  return body;
}

/** The `records[]` of a finished batch, in record order. */
export async function batchRecords(db: Db, jobId: string): Promise<unknown[]> {
  const rows: Pick<JobRecordRow, 'result'>[] = await jobsDb(db)
    .selectFrom('job_records')
    .select('result')
    .where('job_id', '=', jobId)
    .orderBy('idx')
    .execute();
  return rows.map((r) => (r.result === null ? null : JSON.parse(r.result)));
}

export interface ListQuery {
  since?: number;
  status?: JobStatus;
  cursor?: string;
  limit: number;
}

/** GET /v1/jobs: newest first; the cursor is the job_id of the previous page's last row. */
export async function listJobs(db: Db, owner: FileOwner, q: ListQuery, now: number) {
  let cursorRow: Pick<JobRow, 'id' | 'created_at'> | undefined;
  if (q.cursor !== undefined) {
    cursorRow = await findJob(db, owner, q.cursor, now);
    if (!cursorRow)
      throw new ApiError('invalid_request', 'cursor: no such job for this key.', {
        hint: 'Pass the next_cursor of the previous page unchanged.',
      });
  }
  let query = jobsDb(db)
    .selectFrom('jobs')
    .selectAll()
    .where('account_id', '=', owner.accountId)
    .where('mode', '=', owner.mode)
    .where('expires_at', '>', now);
  if (q.since !== undefined) query = query.where('created_at', '>=', q.since);
  if (q.status !== undefined) query = query.where('status', '=', q.status);
  if (cursorRow) {
    const c = cursorRow;
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', c.created_at),
        eb.and([eb('created_at', '=', c.created_at), eb('id', '<', c.id)]),
      ]),
    );
  }
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(q.limit + 1)
    .execute();
  const page = rows.slice(0, q.limit);
  const data = [];
  for (const row of page) {
    const done =
      row.kind === 'batch' && !FINISHED.has(row.status) ? await finishedRecordCount(db, row.id) : 0;
    data.push(jobEntry(row, done));
  }
  return { data, next_cursor: rows.length > q.limit ? (page.at(-1)?.id ?? null) : null };
}

/** Retention (SPEC rule 15): job records after 30 days (their files went after 24 hours). */
export async function sweepJobs(db: Db, now: number): Promise<number> {
  const r = await jobsDb(db).deleteFrom('jobs').where('expires_at', '<=', now).executeTakeFirst();
  return Number(r.numDeletedRows);
}

import { TypeCompiler } from '@sinclair/typebox/compiler';
import { sql } from 'kysely';
import { charge } from '../billing/meter.js';
import { fillEdits, MissingPlaceholderError } from '../domain/batch-placeholders.js';
import { failedEntries, unmatchedEntries } from '../domain/edit-failures.js';
import { toEngineEdits } from '../domain/edit-request.js';
import { type JobRequest, jobsDb, parseRequest, readJobInput } from '../domain/jobs.js';
import { runEdit, watermarkOffAllowed } from '../domain/run-edit.js';
import { sampleMarkFor } from '../domain/sample-mark.js';
import { ApiError } from '../kernel/api-error.js';
import { Edits } from '../schemas/edit.js';
import type { JobRecordRow, JobRow, RecordStatus } from '../store/jobs-schema.js';
import { prepared } from '../store/prepared.js';
import { finishJob } from './finish.js';
import { jobOwner, jobSubject, MAX_ATTEMPTS, type RunnerContext } from './job-context.js';
import { claimRecords, joinBatch, unclaimRecords } from './leases.js';

const editsCheck = TypeCompiler.Compile(Edits);

/**
 * One shard of a batch: claims records (any shard, in any process, may take any record
 * nobody holds), runs each through the same edit path as POST /v1/edit, and stores its
 * `records[]` entry. A shard keeps two records in flight per engine process, so one shard
 * alone keeps every engine process busy (issue 18 item 3): a record's storage and
 * bookkeeping overlap another's engine call. Whoever sees every record
 * finished finalises the job: one charge for the whole batch (work id = job id, so a
 * re-run bills nothing more), the job row, and the webhook.
 */
export async function runBatchShard(runner: RunnerContext, jobId: string): Promise<void> {
  const { svc } = runner;
  const { leaseMs } = svc.config.jobs;
  const job = await joinBatch(svc.db, jobId, svc.config.now(), leaseMs);
  if (!job) return;
  const request = parseRequest(job);
  const { owner, done } = runner.hold(jobId);
  // What every record of the shard shares, worked out once: the template's bytes (read on
  // the first record, so an expired template fails each record as before), and whether the
  // account may turn the watermark off.
  let template: Promise<Buffer | undefined> | undefined;
  const shared: ShardShared = {
    template: () => {
      template ??= readJobInput(svc, request);
      return template;
    },
    watermarkOff: watermarkOffAllowed(svc, jobSubject(job)),
  };
  // Read before any record awaits it: a failed read must not go unhandled meanwhile (each
  // record that awaits it still gets the error).
  shared.watermarkOff.catch(() => {});
  // Two records in flight per engine process: while the main thread stores one record
  // and claims the next, the engine already runs another (one per process left the
  // process idle during that time). Lanes take records from a shard-local stock that is
  // claimed a lane's worth at a time (one statement for several records).
  const lanes = 2 * Math.max(1, svc.config.engineProcesses);
  const stock = new RecordStock(runner, jobId, owner, leaseMs, lanes);
  // A lane that fails untyped stops the others from claiming more; all of them finish
  // what they hold before the shard gives up its leases.
  let failure: { err: unknown } | undefined;
  const lane = async () => {
    while (!runner.stopping && !failure) {
      let record: JobRecordRow | undefined;
      try {
        record = await stock.next();
      } catch (err) {
        failure ??= { err };
        break;
      }
      if (!record) break;
      try {
        await runAndStore(runner, job, request, shared, record, owner);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: lanes }, lane));
    // Claimed but not started (the shard stops, or a lane failed): claimable again at once.
    await stock.giveBack();
  } finally {
    done();
  }
  if (failure) throw failure.err;
  if (!runner.stopping) await finalizeBatch(runner, job);
}

/** The records a shard claimed and has not started yet; refilled one claim at a time. */
class RecordStock {
  private readonly held: JobRecordRow[] = [];
  private refill: Promise<void> | undefined;
  private exhausted = false;

  constructor(
    private readonly runner: RunnerContext,
    private readonly jobId: string,
    private readonly owner: string,
    private readonly leaseMs: number,
    private readonly batch: number,
  ) {}

  /** The next record to run, or undefined when the batch has none left to claim. */
  async next(): Promise<JobRecordRow | undefined> {
    while (this.held.length === 0 && !this.exhausted && !this.runner.stopping) {
      this.refill ??= this.claim().finally(() => {
        this.refill = undefined;
      });
      await this.refill;
    }
    return this.runner.stopping ? undefined : this.held.shift();
  }

  private async claim(): Promise<void> {
    const { svc } = this.runner;
    const rows = await claimRecords(
      svc.db,
      this.jobId,
      this.owner,
      svc.config.now(),
      this.leaseMs,
      this.batch,
    );
    if (rows.length === 0) this.exhausted = true;
    this.held.push(...rows);
  }

  /** Unclaims what is left in hand. */
  async giveBack(): Promise<void> {
    await this.refill?.catch(() => {});
    const left = this.held.splice(0);
    await unclaimRecords(
      this.runner.svc.db,
      this.jobId,
      this.owner,
      left.map((r) => r.idx),
    );
  }
}

interface ShardShared {
  template: () => Promise<Buffer | undefined>;
  watermarkOff: Promise<boolean>;
}

/** Runs one claimed record and stores its entry (throws to leave it for a later attempt). */
async function runAndStore(
  runner: RunnerContext,
  job: JobRow,
  request: JobRequest,
  shared: ShardShared,
  record: JobRecordRow,
  owner: string,
): Promise<void> {
  const { svc } = runner;
  let entry: RecordEntry;
  try {
    const pdf = await shared.template();
    entry = pdf
      ? await runRecord(runner, job, request, pdf, await shared.watermarkOff, record)
      : recordError(
          record.idx,
          new ApiError('not_found', 'The batch template expired before this record ran.'),
        );
  } catch (err) {
    // An untyped error (the output could not be stored, a bug): the record's lease
    // lapses and it is claimed again, as an edit job is; past MAX_ATTEMPTS it fails
    // alone, uncharged, and the batch goes on to finish.
    // A full or failing disk is the service's outage, not the record's: it never uses
    // up the record's attempts (the record runs again once the store takes writes).
    if (record.attempts < MAX_ATTEMPTS || isStorageOutage(err)) throw err;
    runner.log.error({ err, job: job.id, record: record.idx }, 'batch record failed on its last attempt');
    entry = recordError(
      record.idx,
      new ApiError('engine_error', `The record failed ${record.attempts} times on an internal error.`, {
        cause: err,
      }),
    );
  }
  await storeRecord.run(svc.db, {
    status: entry.status,
    result: JSON.stringify(entry),
    pages: entry.pages,
    changes: entry.changes.length,
    zero: 0,
    jobId: job.id,
    idx: record.idx,
    owner,
  });
}

type StoreRecordValues = {
  status: RecordEntry['status'];
  result: string;
  pages: number;
  changes: number;
  zero: 0;
  jobId: string;
  idx: number;
  owner: string;
};

/**
 * A finished record's entry, its lease given up; only while `owner` still holds it (a
 * record whose lease lapsed and was claimed again belongs to its new holder). Compiled
 * once (src/store/prepared.ts): it runs for every record.
 */
const storeRecord = prepared<StoreRecordValues>(
  ['status', 'result', 'pages', 'changes', 'zero', 'jobId', 'idx', 'owner'],
  (db, v) =>
    jobsDb(db)
      .updateTable('job_records')
      .set({
        status: v.status,
        result: v.result,
        pages_billed: v.pages,
        changes_count: v.changes,
        owner: sql<null>`null`,
        lease_until: v.zero,
      })
      .where('job_id', '=', v.jobId)
      .where('idx', '=', v.idx)
      .where('owner', '=', v.owner),
);

interface RecordEntry {
  index: number;
  status: Exclude<RecordStatus, 'pending' | 'running'>;
  output: unknown;
  changes: unknown[];
  unmatched: unknown[];
  failed: unknown[];
  warnings: unknown[];
  /** Form flatten: the fields left live (named by the warning flatten_skipped). */
  flatten_skipped?: string[];
  error?: { code: string; message: string; hint: string };
  /** Billing units of this record (summed into the one charge of the job). */
  pages: number;
  /** Of this record's touched pages, those read by OCR (each counts five in `pages`). */
  ocr_pages: number;
}

function recordError(index: number, err: ApiError): RecordEntry {
  return {
    index,
    status: 'failed',
    output: null,
    changes: [],
    unmatched: [],
    failed: [],
    warnings: [],
    error: { code: err.code, message: err.message, hint: err.hint },
    pages: 0,
    ocr_pages: 0,
  };
}

async function runRecord(
  runner: RunnerContext,
  job: JobRow,
  request: JobRequest,
  pdf: Buffer,
  watermarkOff: boolean,
  record: JobRecordRow,
): Promise<RecordEntry> {
  const index = record.idx;
  let edits: ReturnType<typeof toEngineEdits>;
  try {
    const filled = fillEdits(request.edits, JSON.parse(record.vals) as Record<string, unknown>);
    if (!editsCheck.Check(filled)) {
      const first = [...editsCheck.Errors(filled)][0];
      throw new ApiError(
        'invalid_request',
        `edits${first?.path.replaceAll('/', '.') ?? ''} with this record's values: ${first?.message ?? 'is invalid'}.`,
      );
    }
    edits = toEngineEdits(filled, request.page_count);
  } catch (err) {
    if (err instanceof MissingPlaceholderError)
      return recordError(index, new ApiError('invalid_request', `Record ${index}: ${err.message}`));
    if (err instanceof ApiError) return recordError(index, err);
    throw err;
  }
  try {
    const outcome = await whenEngineTakesIt(runner, () =>
      runEdit(runner.svc, {
        owner: jobOwner(job),
        subject: jobSubject(job),
        // Billed once for the whole batch when it finishes (finalizeBatch).
        workId: undefined,
        pdf,
        password: request.password ?? undefined,
        edits,
        options: request.options ?? undefined,
        mark: sampleMarkFor(jobOwner(job)),
        sourceFileId: request.source_file_id ?? undefined,
        // A template given by URL: the job's copy of it is what the before previews show,
        // rendered when fetched (the engine draws no preview crops for each record).
        previewSourceId: request.input_file_id,
        timeoutMs: runner.svc.config.jobs.timeoutMs,
        watermarkOffAllowed: watermarkOff,
        templateCache: true,
      }),
    );
    const r = outcome.result;
    if (outcome.kind === 'all_failed') {
      return {
        ...recordError(index, new ApiError('edit_failed', 'Every edit that matched failed verification.')),
        unmatched: unmatchedEntries(r),
        failed: failedEntries(r),
        warnings: r.warnings,
      };
    }
    const b = outcome.body;
    return {
      index,
      status: b.status,
      output: b.output,
      changes: b.changes,
      unmatched: b.unmatched,
      failed: b.failed,
      warnings: b.warnings,
      ...(b.flatten_skipped ? { flatten_skipped: b.flatten_skipped } : {}),
      pages: outcome.pagesBilled,
      ocr_pages: outcome.ocrPages,
    };
  } catch (err) {
    if (err instanceof ApiError) return recordError(index, err);
    throw err;
  }
}

/**
 * Runs `call`, again after a pause while the engine's queue is full (429 rate_limited): a
 * worker's shards together may hold more records than the pool queues (each keeps two per
 * engine process in flight), and a full queue is no fault of the record's. Gives up (the
 * record keeps the error) only when the runner stops.
 */
async function whenEngineTakesIt<T>(runner: RunnerContext, call: () => Promise<T>): Promise<T> {
  for (let pause = 50; ; pause = Math.min(2 * pause, 1_000)) {
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 'rate_limited') || runner.stopping) throw err;
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}

/** When every record has finished: one charge, the job's final status, the webhook. */
export async function finalizeBatch(runner: RunnerContext, job: JobRow): Promise<void> {
  const { svc } = runner;
  const rows = await jobsDb(svc.db)
    .selectFrom('job_records')
    .select(['status', 'pages_billed', 'changes_count'])
    .where('job_id', '=', job.id)
    .execute();
  if (rows.some((r) => r.status === 'pending' || r.status === 'running')) return;
  const units = rows.reduce((n, r) => n + r.pages_billed, 0);
  const changes = rows.reduce((n, r) => n + r.changes_count, 0);
  const ocrPages = await batchOcrPages(runner, job.id);
  const now = svc.config.now();
  // The ledger keeps pages and OCR pages apart; billingUnits(pages, ocrPages) === units.
  const charged = await charge(svc.db, jobSubject(job), job.id, units - 4 * ocrPages, { ocrPages }, now);
  const status = rows.every((r) => r.status === 'done') ? 'done' : changes === 0 ? 'failed' : 'partial';
  // Per-record changes, outputs and failures are in records[]; the top level sums up.
  const result = {
    status,
    changes: [],
    unmatched: [],
    failed: [],
    warnings: [],
    output: null,
    usage: { pages_billed: charged.billed, remaining: charged.remaining },
  };
  await finishJob(
    svc.db,
    job,
    null,
    { status, result, pagesBilled: charged.billed, changesCount: changes },
    now,
  );
}

/**
 * The OCR pages of a finished batch, summed from its records' entries. Only a record billed
 * five units or more can hold one (an OCR page counts five), so the others are not read.
 */
async function batchOcrPages(runner: RunnerContext, jobId: string): Promise<number> {
  const rows = await jobsDb(runner.svc.db)
    .selectFrom('job_records')
    .select('result')
    .where('job_id', '=', jobId)
    .where('pages_billed', '>=', 5)
    .execute();
  let total = 0;
  for (const r of rows) {
    if (r.result === null) continue;
    const n = (JSON.parse(r.result) as Partial<RecordEntry>).ocr_pages;
    if (typeof n === 'number' && Number.isInteger(n) && n > 0) total += n;
  }
  return total;
}

/** Errors of a blob store that cannot take writes right now (disk full, quota, read-only, I/O). */
function isStorageOutage(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'EROFS' || code === 'EIO') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { toEngineEdits } from '../domain/edit-request.js';
import { jobsDb, parseRequest, readJobInput } from '../domain/jobs.js';
import { allFailedBody, runEdit } from '../domain/run-edit.js';
import { sampleMarkFor } from '../domain/sample-mark.js';
import { ApiError } from '../kernel/api-error.js';
import { runBatchShard } from './batch-runner.js';
import { finishJob } from './finish.js';
import {
  errorResult,
  jobOwner,
  jobSubject,
  MAX_ATTEMPTS,
  type RunnerContext,
  type RunnerServices,
} from './job-context.js';
import type { Doorbell } from './job-queue.js';
import { claimEditJob, release, renew } from './leases.js';

/**
 * Runs bells: claims the work in the database, renews the lease while working, records
 * the result. Owner tokens of running work are kept so SIGTERM past its grace can release
 * them (another worker then resumes at once instead of after the lease).
 */
export class JobRunner implements RunnerContext {
  private readonly owners = new Set<string>();
  private stopped = false;

  constructor(
    readonly svc: RunnerServices,
    readonly log: FastifyBaseLogger,
  ) {}

  get stopping(): boolean {
    return this.stopped;
  }

  /** No new records are started after this (running ones finish). */
  stop(): void {
    this.stopped = true;
  }

  async releaseAll(): Promise<void> {
    await release(this.svc.db, [...this.owners]);
    this.owners.clear();
  }

  /** A fresh owner token with a heartbeat renewing its leases; `done()` stops both. */
  hold(jobId: string): { owner: string; done: () => void } {
    const owner = randomBytes(12).toString('hex');
    this.owners.add(owner);
    const { leaseMs } = this.svc.config.jobs;
    const timer = setInterval(
      () => {
        renew(this.svc.db, jobId, owner, this.svc.config.now(), leaseMs).catch((err: unknown) =>
          this.log.warn({ err, job: jobId }, 'lease renewal failed'),
        );
      },
      Math.max(100, Math.floor(leaseMs / 3)),
    );
    timer.unref();
    return {
      owner,
      done: () => {
        clearInterval(timer);
        this.owners.delete(owner);
      },
    };
  }

  async run(bell: Doorbell): Promise<void> {
    try {
      const kind = await this.kindOf(bell.jobId);
      if (kind === 'edit') await this.runEditJob(bell.jobId);
      else if (kind === 'batch') await runBatchShard(this, bell.jobId);
    } catch (err) {
      // The lease lapses and the reconciler rings again; nothing is lost.
      this.log.error({ err, job: bell.jobId }, 'job run failed; it will be retried');
    }
  }

  private async kindOf(jobId: string) {
    const row = await jobsDb(this.svc.db)
      .selectFrom('jobs')
      .select('kind')
      .where('id', '=', jobId)
      .executeTakeFirst();
    return row?.kind;
  }

  private async runEditJob(jobId: string): Promise<void> {
    const { svc } = this;
    const { owner, done } = this.hold(jobId);
    try {
      const row = await claimEditJob(svc.db, jobId, owner, svc.config.now(), svc.config.jobs.leaseMs);
      if (!row) return; // finished, or running under a live lease elsewhere
      const request = parseRequest(row);
      const pdf = await readJobInput(svc, request);
      if (!pdf) {
        const err = new ApiError('not_found', 'The job input expired before the job could run.');
        await finishJob(svc.db, row, owner, failure(await errorResult(svc, row, err)), svc.config.now());
        return;
      }
      const input = {
        owner: jobOwner(row),
        subject: jobSubject(row),
        workId: row.id,
        pdf,
        password: request.password ?? undefined,
        edits: toEngineEdits(request.edits, request.page_count),
        options: request.options ?? undefined,
        mark: sampleMarkFor(jobOwner(row)),
        sourceFileId: request.source_file_id ?? undefined,
        previewSourceId: request.input_file_id,
        timeoutMs: svc.config.jobs.timeoutMs,
      };
      let finish: Parameters<typeof finishJob>[3];
      try {
        const outcome = await runEdit(svc, input);
        const body = outcome.kind === 'ok' ? outcome.body : await allFailedBody(svc, input, outcome.result);
        finish = {
          status: body.status,
          result: body,
          pagesBilled: outcome.kind === 'ok' ? outcome.pagesBilled : 0,
          changesCount: body.changes.length,
        };
      } catch (err) {
        // Anything else than a typed refusal (the output could not be stored: disk full, blob
        // store or database down) is retried like an engine crash, and after MAX_ATTEMPTS
        // ends the job as failed with engine_error instead of re-running it for ever.
        if (!(err instanceof ApiError)) {
          if (row.attempts < MAX_ATTEMPTS) throw err;
          this.log.error({ err, job: jobId }, 'job failed on its last attempt');
          finish = failure(
            await errorResult(
              svc,
              row,
              new ApiError('engine_error', `The job failed ${row.attempts} times on an internal error.`, {
                cause: err,
              }),
            ),
          );
        } else {
          const transient =
            err.code === 'engine_error' || err.code === 'engine_timeout' || err.code === 'rate_limited';
          if (transient && row.attempts < MAX_ATTEMPTS) throw err;
          finish = failure(await errorResult(svc, row, err));
        }
      }
      await finishJob(svc.db, row, owner, finish, svc.config.now());
    } finally {
      done();
    }
  }
}

function failure(result: Awaited<ReturnType<typeof errorResult>>) {
  return { status: 'failed' as const, result, pagesBilled: 0, changesCount: 0 };
}

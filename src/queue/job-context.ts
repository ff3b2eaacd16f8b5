import type { FastifyBaseLogger } from 'fastify';
import { usageOf } from '../billing/meter.js';
import type { AccountPlan } from '../billing/plans.js';
import type { BillingSubject } from '../billing/subject.js';
import type { EditServices } from '../domain/run-edit.js';
import type { ApiError } from '../kernel/api-error.js';
import type { JobRow } from '../store/jobs-schema.js';

/**
 * Internal failures (an engine crash or timeout, an untyped error: the output could not be
 * stored) of an edit job or of one batch record are retried this many times in all (a
 * fresh lease each) before it ends as failed with engine_error.
 */
export const MAX_ATTEMPTS = 3;

/** What a job's runner (edit job or batch shard) gets from the JobRunner. */
export interface RunnerContext {
  readonly svc: RunnerServices;
  readonly log: FastifyBaseLogger;
  /** True after SIGTERM: start no new record. */
  readonly stopping: boolean;
  /** A fresh owner token whose leases are renewed until `done()`. */
  hold(jobId: string): { owner: string; done: () => void };
}

export type RunnerServices = EditServices;

/** The account subject a job bills (the plan it was queued under). */
export function jobSubject(row: JobRow): BillingSubject {
  return { kind: 'account', accountId: row.account_id, mode: row.mode, plan: row.plan as AccountPlan };
}

export function jobOwner(row: JobRow) {
  return { accountId: row.account_id, mode: row.mode };
}

/** A job that ends in an error (its input expired, the engine refused the document). */
export async function errorResult(svc: RunnerServices, row: JobRow, err: ApiError) {
  const usage = await usageOf(svc.db, jobSubject(row), svc.config.now());
  return {
    status: 'failed' as const,
    changes: [],
    unmatched: [],
    failed: [],
    warnings: [],
    output: null,
    usage: { pages_billed: 0, remaining: usage.remaining },
    error: { code: err.code, message: err.message, hint: err.hint },
  };
}

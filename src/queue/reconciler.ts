import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { jobsDb, sweepJobs } from '../domain/jobs.js';
import type { JobRow } from '../store/jobs-schema.js';
import type { Database } from '../store/schema.js';
import type { Doorbell, JobQueue } from './job-queue.js';

const SWEEP_EVERY_MS = 60 * 60_000;

/** The bells of a job: one for an edit, up to `shards` for a batch (never more than records left). */
export function bellsOf(row: Pick<JobRow, 'id' | 'kind' | 'progress_total'>, shards: number): Doorbell[] {
  const n = row.kind === 'batch' ? Math.max(1, Math.min(shards, row.progress_total)) : 1;
  return Array.from({ length: n }, (_, shard) => ({ jobId: row.id, shard }));
}

export interface ReconcilerOptions {
  db: Kysely<Database>;
  queue: JobQueue;
  now: () => number;
  intervalMs: number;
  shards: number;
  log: FastifyBaseLogger;
}

/**
 * The database is the source of truth; this makes the queue agree with it. Every
 * interval (and once at start) it rings for every unfinished job whose lease has lapsed:
 * queued jobs nobody took (a Redis restart lost the bell, the API died between insert and
 * ring) and running jobs whose worker died. Ringing a bell that is still queued adds
 * nothing, so doing it from every process is harmless. It also removes job records past
 * their 30 days.
 */
export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private lastSweep = 0;
  private running: Promise<number> | undefined;

  constructor(private readonly o: ReconcilerOptions) {}

  start(): void {
    if (this.timer) return;
    const tick = () => {
      this.reconcile().catch((err: unknown) => this.o.log.error({ err }, 'job reconcile failed'));
    };
    tick();
    this.timer = setInterval(tick, this.o.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }

  /** Rings for lapsed unfinished jobs; returns how many jobs it rang for. */
  reconcile(): Promise<number> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<number> {
    const now = this.o.now();
    if (now - this.lastSweep > SWEEP_EVERY_MS) {
      this.lastSweep = now;
      await sweepJobs(this.o.db, now);
    }
    let rung = 0;
    let after = '';
    for (;;) {
      const rows = await jobsDb(this.o.db)
        .selectFrom('jobs')
        .select(['id', 'kind', 'progress_total'])
        .where('status', 'in', ['queued', 'running'])
        .where('lease_until', '<=', now)
        .where('id', '>', after)
        .orderBy('id')
        .limit(200)
        .execute();
      if (rows.length === 0) return rung;
      await this.o.queue.ring(rows.flatMap((r) => bellsOf(r, this.o.shards)));
      rung += rows.length;
      after = rows.at(-1)!.id;
    }
  }
}

/**
 * The queue only rings a bell: "job X (shard k) has work". What the work is, who owns
 * it and whether it is finished live in the database (src/domain/jobs.ts, leases.ts), so
 * a bell rung twice, or lost with a Redis restart, costs nothing: the runner claims work
 * with a lease, and the reconciler rings again for unfinished work nobody holds.
 *
 * Two implementations with this interface: BullMQ on Redis (REDIS_URL; several API and
 * worker processes share it) and an in-process queue (embedded mode).
 */
export interface Doorbell {
  jobId: string;
  /** 0 for an edit job; 0…n-1 for the n bells of one batch (each one more pair of hands). */
  shard: number;
}

export type BellHandler = (bell: Doorbell) => Promise<void>;

export interface JobQueue {
  readonly kind: 'bullmq' | 'embedded';
  /** Adds the bells that are not already waiting or running. */
  ring(bells: Doorbell[]): Promise<void>;
  /** Starts running bells, `concurrency` at a time. */
  consume(handler: BellHandler, concurrency: number): void;
  /** Takes no more bells; resolves when the running ones finished or `graceMs` passed. */
  stopConsuming(graceMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The queue-wide id of a bell (BullMQ job ids must not contain ':'). */
export function bellId(bell: Doorbell): string {
  return `${bell.jobId}-s${bell.shard}`;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

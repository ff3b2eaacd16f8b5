import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { type BellHandler, bellId, type Doorbell, type JobQueue, sleep } from './job-queue.js';
import { assertNoEviction } from './redis-policy.js';

const QUEUE_NAME = 'jobs';

export interface BullQueueOptions {
  redisUrl: string;
  prefix: string;
  /** The job lease: a worker's BullMQ lock lasts as long, so a killed worker's bell is
   * found stalled and handed out again on the same time scale. */
  leaseMs: number;
}

/**
 * BullMQ on Redis. Bells are BullMQ jobs with a deterministic id, so ringing one that is
 * waiting or running adds nothing; completed bells are removed at once, so a later ring
 * (the reconciler's) adds it again. A stalled bell (its worker was killed) goes back to
 * waiting; it is never failed for stalling (the database decides when work is finished).
 */
export class BullQueue implements JobQueue {
  readonly kind = 'bullmq' as const;
  private worker: Worker | undefined;
  private workerConnection: Redis | undefined;

  private constructor(
    private readonly o: BullQueueOptions,
    private readonly connection: Redis,
    private readonly queue: Queue,
  ) {}

  /** Connects and checks that Redis does not evict keys (refuses to start otherwise). */
  static async open(o: BullQueueOptions): Promise<BullQueue> {
    // The producer side fails fast while Redis is unreachable (no offline queue, one retry):
    // a job is already stored when its bell is rung, and the reconciler rings again, so
    // POST /v1/edit and /v1/batch answer 202 at once instead of waiting for Redis to return.
    const connection = new Redis(o.redisUrl, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      lazyConnect: true,
    });
    // An unreachable Redis fails the start instead of retrying forever in the background.
    connection.on('error', () => {});
    try {
      await connection.connect();
      await assertNoEviction(connection);
    } catch (err) {
      connection.disconnect();
      throw err;
    }
    const queue = new Queue(QUEUE_NAME, { connection, prefix: o.prefix });
    queue.on('error', () => {});
    return new BullQueue(o, connection, queue);
  }

  async ring(bells: Doorbell[]): Promise<void> {
    await Promise.all(
      bells.map((bell) =>
        this.queue.add('bell', bell, { jobId: bellId(bell), removeOnComplete: true, removeOnFail: true }),
      ),
    );
  }

  consume(handler: BellHandler, concurrency: number): void {
    if (this.worker || concurrency <= 0) return;
    // Workers block on Redis: their own connection, which must retry forever (BullMQ).
    this.workerConnection = new Redis(this.o.redisUrl, { maxRetriesPerRequest: null });
    this.workerConnection.on('error', () => {});
    this.worker = new Worker<Doorbell>(QUEUE_NAME, async (job) => handler(job.data), {
      connection: this.workerConnection,
      prefix: this.o.prefix,
      concurrency,
      lockDuration: this.o.leaseMs,
      stalledInterval: Math.max(1_000, Math.floor(this.o.leaseMs / 2)),
      maxStalledCount: 1_000,
    });
    this.worker.on('error', () => {});
  }

  async stopConsuming(graceMs: number): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    // close() waits for the running bells; past the grace they are abandoned (their
    // leases are released by the runner, their BullMQ locks lapse and they run again).
    const closed = worker.close().then(() => true);
    const finished = await Promise.race([closed, sleep(graceMs).then(() => false)]);
    if (!finished) await worker.close(true).catch(() => {});
    this.worker = undefined;
  }

  async close(): Promise<void> {
    await this.stopConsuming(0);
    await this.queue.close().catch(() => {});
    this.workerConnection?.disconnect();
    this.connection.disconnect();
  }
}

import { type BellHandler, bellId, type Doorbell, type JobQueue, sleep } from './job-queue.js';

/**
 * Embedded mode's queue: bells in memory, run in this process. Durability comes from the
 * database exactly as with BullMQ: after a restart the reconciler finds the unfinished
 * jobs and rings for them again.
 */
export class EmbeddedQueue implements JobQueue {
  readonly kind = 'embedded' as const;
  private readonly waiting: Doorbell[] = [];
  /** Bells waiting or running, by id: a bell is never queued twice at once. */
  private readonly known = new Set<string>();
  private active = 0;
  private handler: BellHandler | undefined;
  private concurrency = 0;
  private stopping = false;

  async ring(bells: Doorbell[]): Promise<void> {
    for (const bell of bells) {
      const id = bellId(bell);
      if (this.known.has(id)) continue;
      this.known.add(id);
      this.waiting.push(bell);
    }
    this.pump();
  }

  consume(handler: BellHandler, concurrency: number): void {
    this.handler = handler;
    this.concurrency = concurrency;
    this.stopping = false;
    this.pump();
  }

  private pump(): void {
    while (!this.stopping && this.handler && this.active < this.concurrency && this.waiting.length > 0) {
      const bell = this.waiting.shift()!;
      const handler = this.handler;
      this.active++;
      // The handler reports its own failures; a rejection here must not stop the queue.
      handler(bell)
        .catch(() => {})
        .finally(() => {
          this.active--;
          this.known.delete(bellId(bell));
          this.pump();
        });
    }
  }

  async stopConsuming(graceMs: number): Promise<void> {
    this.stopping = true;
    const until = Date.now() + graceMs;
    while (this.active > 0 && Date.now() < until) await sleep(25);
  }

  async close(): Promise<void> {
    this.stopping = true;
    this.waiting.length = 0;
    this.known.clear();
  }

  /** Bells waiting or running (tests). */
  get size(): number {
    return this.known.size;
  }
}

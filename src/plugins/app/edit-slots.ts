import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
import { PLANS } from '../../billing/plans.js';
import { ApiError } from '../../kernel/api-error.js';
import type { Principal } from '../../kernel/principal.js';

/** Seconds a caller over its plan's concurrency is told to wait. */
export const CONCURRENCY_RETRY_AFTER_S = 2;

/** In-flight synchronous edits per account, counted in this process or in Redis. */
export interface SlotCounter {
  acquire(key: string, ttlMs: number): Promise<number>;
  release(key: string): Promise<void>;
  close(): Promise<void>;
}

class MemorySlots implements SlotCounter {
  private readonly n = new Map<string, number>();
  async acquire(key: string): Promise<number> {
    const v = (this.n.get(key) ?? 0) + 1;
    this.n.set(key, v);
    return v;
  }
  async release(key: string): Promise<void> {
    const v = (this.n.get(key) ?? 1) - 1;
    if (v <= 0) this.n.delete(key);
    else this.n.set(key, v);
  }
  async close(): Promise<void> {
    this.n.clear();
  }
}

// INCR with a safety expiry: a process killed mid-edit cannot hold a slot for ever.
const ACQUIRE = `local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return n`;

// DECR only a counter that is there and above zero: after a FLUSHALL or a Redis restart
// mid-edit, a plain DECR would create the key at -1 (without expiry), and every later
// acquire would count one edit short, letting the account past its plan's concurrency.
const RELEASE = `local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then return redis.call('DECR', KEYS[1]) end
return 0`;

class RedisSlots implements SlotCounter {
  constructor(private readonly redis: Redis) {}
  async acquire(key: string, ttlMs: number): Promise<number> {
    return Number(await this.redis.eval(ACQUIRE, 1, key, String(ttlMs)));
  }
  async release(key: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, key);
  }
  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

export type EditSlots = <T>(principal: Principal | undefined, work: () => Promise<T>) => Promise<T>;

/**
 * Plan concurrency (GET /v1/limits `concurrency`): an account's synchronous edits in
 * flight above it answer 429 rate_limited with Retry-After; jobs queue instead and are
 * not counted. Keyless calls are bounded by the keyless rate limit, not here.
 * `await fastify.editSlots(principal, () => work())`.
 */
export default fp(
  async function editSlots(fastify: FastifyInstance) {
    const { config } = fastify;
    const counter: SlotCounter = config.redisUrl
      ? new RedisSlots(new Redis(config.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2_000 }))
      : new MemorySlots();
    fastify.addHook('onClose', async () => counter.close());
    const run: EditSlots = async (principal, work) => {
      if (!principal) return work();
      const limit = PLANS[principal.plan].concurrency;
      const key = `${config.rateLimitPrefix}conc:${principal.accountId}`;
      let n: number;
      try {
        n = await counter.acquire(key, 2 * config.syncTimeoutMs + 60_000);
      } catch (err) {
        fastify.log.error({ err }, 'concurrency counter unavailable; edit let through');
        return work();
      }
      try {
        if (n > limit) {
          throw new ApiError(
            'rate_limited',
            `Over ${limit} synchronous edits at once for this account's plan.`,
            {
              hint: 'Wait Retry-After seconds, or send the edit with options.async true (jobs queue).',
              headers: { 'Retry-After': String(CONCURRENCY_RETRY_AFTER_S) },
            },
          );
        }
        return await work();
      } finally {
        await counter.release(key).catch((err) => fastify.log.error({ err }, 'concurrency release failed'));
      }
    };
    fastify.decorate('editSlots', run);
  },
  { name: 'edit-slots' },
);

declare module 'fastify' {
  interface FastifyInstance {
    editSlots: EditSlots;
  }
}

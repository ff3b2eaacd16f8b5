import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
import { clientAddressGroup } from '../../billing/client-ip.js';
import { PLANS } from '../../billing/plans.js';
import { ApiError } from '../../kernel/api-error.js';
import type { KeyHook } from './auth.js';

const WINDOW_MS = 60_000;

/** Counts hits of one budget in one window; returns the count including this hit. */
export interface RateCounter {
  hit(key: string, ttlMs: number): Promise<number>;
  close(): Promise<void>;
}

/** One process: a map of window counters, pruned as windows pass. */
export class MemoryRateCounter implements RateCounter {
  private readonly counts = new Map<string, { n: number; until: number }>();

  async hit(key: string, ttlMs: number): Promise<number> {
    const now = Date.now();
    if (this.counts.size > 10_000) {
      for (const [k, v] of this.counts) if (v.until <= now) this.counts.delete(k);
    }
    const entry = this.counts.get(key);
    if (!entry || entry.until <= now) {
      this.counts.set(key, { n: 1, until: now + ttlMs });
      return 1;
    }
    entry.n += 1;
    return entry.n;
  }

  async close(): Promise<void> {
    this.counts.clear();
  }
}

// INCR and the expiry in one atomic step: a counter can never be left without a TTL.
const HIT_SCRIPT = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

/** Shared through Redis: every API process counting the same key sees one budget. */
export class RedisRateCounter implements RateCounter {
  constructor(private readonly redis: Redis) {}

  async hit(key: string, ttlMs: number): Promise<number> {
    return Number(await this.redis.eval(HIT_SCRIPT, 1, key, String(ttlMs)));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/** The budget a request counts against: its key, or for keyless calls its address group. */
function budgetOf(request: FastifyRequest): { id: string; limit: number } {
  const p = request.principal;
  if (p) return { id: `key:${p.keyId}`, limit: PLANS[p.plan].requestsPerMinute };
  return { id: `ip:${clientAddressGroup(request.ip)}`, limit: PLANS.keyless.requestsPerMinute };
}

/**
 * Per-minute rate limits by plan (SPEC "Limits"), fixed windows aligned to the minute.
 * Routes marked (rl) in the SPEC opt in after authentication:
 *   `{ onRequest: [fastify.requireKey, fastify.rateLimit] }` (or optionalKey for keyless).
 * Every such response carries X-RateLimit-Limit, -Remaining and -Reset (Unix seconds of
 * the next window); over the budget the answer is 429 rate_limited with Retry-After.
 * Counters live in Redis when REDIS_URL is set, in this process otherwise. When Redis does
 * not answer the request is let through (logged): a counter outage must not stop the API.
 */
export default fp(
  async function rateLimit(fastify: FastifyInstance) {
    const counter: RateCounter = fastify.config.redisUrl
      ? new RedisRateCounter(
          new Redis(fastify.config.redisUrl, {
            maxRetriesPerRequest: 1,
            connectTimeout: 2_000,
            enableAutoPipelining: true,
          }),
        )
      : new MemoryRateCounter();
    fastify.addHook('onClose', async () => counter.close());

    const hook: KeyHook = async (request: FastifyRequest, reply: FastifyReply) => {
      const budget = budgetOf(request);
      const id = budget.id;
      const limit = budget.limit * fastify.config.rateLimitFactor;
      const now = fastify.config.now();
      const window = Math.floor(now / WINDOW_MS);
      const resetMs = (window + 1) * WINDOW_MS;
      let count: number;
      try {
        count = await counter.hit(`${fastify.config.rateLimitPrefix}${id}:${window}`, WINDOW_MS + 5_000);
      } catch (err) {
        request.log.error({ err }, 'rate-limit counter unavailable; request let through');
        return;
      }
      reply.header('X-RateLimit-Limit', String(limit));
      reply.header('X-RateLimit-Remaining', String(Math.max(0, limit - count)));
      reply.header('X-RateLimit-Reset', String(Math.ceil(resetMs / 1000)));
      if (count > limit) {
        const retryAfter = Math.max(1, Math.ceil((resetMs - now) / 1000));
        throw new ApiError(
          'rate_limited',
          `Over ${limit} requests per minute for this ${request.principal ? 'key' : 'address'}.`,
          {
            headers: { 'Retry-After': String(retryAfter) },
          },
        );
      }
    };
    fastify.decorate('rateLimit', hook);
  },
  { name: 'rate-limit', dependencies: ['auth'] },
);

declare module 'fastify' {
  interface FastifyInstance {
    /** onRequest hook of (rl) routes; runs after requireKey/optionalKey. */
    rateLimit: KeyHook;
  }
}

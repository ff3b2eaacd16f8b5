import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { ApiError } from '../kernel/api-error.js';
import { errorResponses } from '../schemas/errors.js';
import { Health } from '../schemas/health.js';
import { ref } from '../schemas/ref.js';

/** A health check that hangs is as bad as one that fails: give the database this long. */
const DB_PING_TIMEOUT_MS = 2_000;

async function ping(fastify: FastifyInstance): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('database ping timed out')), DB_PING_TIMEOUT_MS);
  });
  try {
    await Promise.race([sql`select 1`.execute(fastify.db), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * GET /healthz (no key, SPEC "Endpoints"): 200 while the database answers and the engine
 * frees a process within the budget of one call; 503 (same body, status engine_saturated)
 * when no engine process has been free for longer than that budget, so a balancer stops
 * sending work; 500 engine_error when the database does not answer.
 */
export default async function health(fastify: FastifyInstance): Promise<void> {
  const schema = {
    summary: 'Health check',
    tags: ['service'],
    response: {
      200: ref(Health, { description: 'The API, its database and its engine answer.' }),
      // 503 carries the health body, not the error envelope (the closed error list has no
      // 503): declared as the 5xx range so the error statuses keep their shared responses.
      '5xx': ref(Health, {
        description: '503: no engine process has been free for longer than the budget of one call.',
      }),
      ...errorResponses(500),
    },
  };
  fastify.get('/healthz', { schema }, async (_req, reply) => {
    try {
      await ping(fastify);
    } catch (err) {
      // The cause is logged by the error handler; the client only learns what is down.
      throw new ApiError('engine_error', 'database not answering', {
        hint: 'The service cannot reach its database; retry shortly.',
        cause: err,
      });
    }
    if (!fastify.hasDecorator('engine')) return { status: 'ok' as const };
    const s = fastify.engine.stats;
    const budget = fastify.engine.timeoutMs;
    const engine = {
      processes: s.processes,
      busy: s.busy,
      free: s.free,
      starting: s.starting,
      queued: s.queued,
      saturated_ms: s.saturatedMs,
      budget_ms: budget,
    };
    if (s.saturatedMs > budget) {
      reply.code(503);
      return { status: 'engine_saturated' as const, engine };
    }
    return { status: 'ok' as const, engine };
  });
}

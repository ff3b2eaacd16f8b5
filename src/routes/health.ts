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

/** GET /healthz (no key, SPEC "Endpoints"): 200 while the database answers. */
export default async function health(fastify: FastifyInstance): Promise<void> {
  const schema = {
    summary: 'Health check',
    tags: ['service'],
    response: {
      200: ref(Health, { description: 'The API and its database answer.' }),
      ...errorResponses(500),
    },
  };
  fastify.get('/healthz', { schema }, async () => {
    try {
      await ping(fastify);
    } catch (err) {
      // The cause is logged by the error handler; the client only learns what is down.
      throw new ApiError('engine_error', 'database not answering', {
        hint: 'The service cannot reach its database; retry shortly.',
        cause: err,
      });
    }
    return { status: 'ok' };
  });
}

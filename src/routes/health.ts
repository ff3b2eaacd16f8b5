import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { ApiError } from '../domain/api-error.js';

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

const HealthResponse = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false });

/** GET /healthz (no key, SPEC "Endpoints"): 200 while the database answers. */
export default async function health(fastify: FastifyInstance): Promise<void> {
  fastify.get('/healthz', { schema: { response: { 200: HealthResponse } } }, async () => {
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

import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { sweepIdempotencyRecords } from '../../domain/idempotency.js';

const SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * Retention of gateway records: idempotency records after 24 hours (file blobs are swept
 * by the files plugin; job records join here with the jobs). Every process sweeps; the
 * deletes are idempotent. Time comes from `config.now`, so tests can move it.
 */
export default fp(
  async function retention(fastify: FastifyInstance) {
    let timer: NodeJS.Timeout | undefined;
    fastify.addHook('onReady', async () => {
      timer = setInterval(() => {
        sweepIdempotencyRecords(fastify.db, fastify.config.now()).catch((err: unknown) =>
          fastify.log.error({ err }, 'idempotency retention sweep failed'),
        );
      }, SWEEP_INTERVAL_MS);
      timer.unref();
    });
    fastify.addHook('onClose', async () => clearInterval(timer));
  },
  { name: 'retention', dependencies: ['db'] },
);

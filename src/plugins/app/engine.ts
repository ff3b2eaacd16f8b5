import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { EnginePool } from '../../engine/pool.js';

/** One engine pool per process, closed with the server. */
export default fp(
  async function engine(fastify: FastifyInstance) {
    const pool = new EnginePool({
      pdfiumLibPath: fastify.config.pdfiumLibPath,
      threads: fastify.config.engineThreads,
      timeoutMs: fastify.config.syncTimeoutMs,
    });
    fastify.decorate('engine', pool);
    fastify.addHook('onClose', async () => {
      await pool.close();
    });
  },
  { name: 'engine' },
);

declare module 'fastify' {
  interface FastifyInstance {
    engine: EnginePool;
  }
}

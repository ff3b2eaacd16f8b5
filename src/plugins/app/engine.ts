import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { EnginePool } from '../../engine/pool.js';

/** One engine pool per API process (its engine processes end with the server). */
export default fp(
  async function engine(fastify: FastifyInstance) {
    const pool = new EnginePool({
      pdfiumLibPath: fastify.config.pdfiumLibPath,
      processes: fastify.config.engineProcesses,
      timeoutMs: fastify.config.syncTimeoutMs,
      memoryMb: fastify.config.engineMemoryMb,
      recycleMb: fastify.config.engineRecycleMb,
      // Embedded mode stores blobs on local disk (src/plugins/app/blobs.ts): the engine
      // processes write edits' outputs there themselves (src/engine/output-file.ts).
      ...(fastify.config.s3 ? {} : { outputDir: path.join(fastify.config.dataDir, 'blobs') }),
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

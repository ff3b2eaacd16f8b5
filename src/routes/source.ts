import type { FastifyInstance } from 'fastify';
import { buildEngineSourceArchive } from '../source/engine-source.js';

/**
 * GET /source (key required, a test key is enough): the engine's source as
 * `application/gzip`. Built on the first request and kept for the life of the process:
 * the source of a running process does not change under it.
 */
export default async function sourceRoutes(fastify: FastifyInstance): Promise<void> {
  let archive: Buffer | undefined;
  fastify.get('/source', { onRequest: [fastify.requireKey, fastify.rateLimit] }, async (_request, reply) => {
    archive ??= buildEngineSourceArchive();
    return reply
      .type('application/gzip')
      .header('Content-Disposition', 'attachment; filename="pdfedit-engine-source.tar.gz"')
      .header('Cache-Control', 'private, max-age=3600')
      .send(archive);
  });
}

import type { FastifyInstance } from 'fastify';
import { Binary } from '../schemas/common.js';
import { errorResponses } from '../schemas/errors.js';
import { buildEngineSourceArchive } from '../source/engine-source.js';

/**
 * GET /source (key required, a test key is enough): the engine's source as
 * `application/gzip`. Built on the first request and kept for the life of the process:
 * the source of a running process does not change under it.
 */
export default async function sourceRoutes(fastify: FastifyInstance): Promise<void> {
  let archive: Buffer | undefined;
  const schema = {
    summary: 'Engine source archive',
    description:
      'gzip tar of the engine (crates, native addon, engine worker), its Dockerfile and the AGPL-3.0 licence. Not the gateway.',
    tags: ['service'],
    response: {
      200: { description: 'The archive.', content: { 'application/gzip': { schema: Binary } } },
      ...errorResponses(401, 429),
    },
  };
  fastify.get(
    '/source',
    { onRequest: [fastify.requireKey, fastify.rateLimit], schema },
    async (_request, reply) => {
      archive ??= buildEngineSourceArchive();
      return reply
        .type('application/gzip')
        .header('Content-Disposition', 'attachment; filename="pdfedit-engine-source.tar.gz"')
        .header('Cache-Control', 'private, max-age=3600')
        .send(archive);
    },
  );
}

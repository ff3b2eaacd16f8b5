import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** Every response carries X-Request-Id (SPEC "Endpoints"), errors and 404s included. */
export default fp(
  async function requestId(fastify: FastifyInstance) {
    fastify.addHook('onRequest', async (request, reply) => {
      reply.header('X-Request-Id', request.id);
    });
  },
  { name: 'request-id' },
);

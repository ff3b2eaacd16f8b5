import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * @fastify/formbody, for the server-rendered pages' HTML forms
 * (`application/x-www-form-urlencoded`). Wrapped with fastify-plugin so the parser lands in
 * the plugin that registers it: register it inside the plugin of the page routes, so the
 * JSON API keeps refusing form bodies.
 */
async function formBodies(fastify: FastifyInstance): Promise<void> {
  await fastify.register(formbody, { bodyLimit: 64 * 1024 });
}

export default fp(formBodies, { name: 'form-bodies' });

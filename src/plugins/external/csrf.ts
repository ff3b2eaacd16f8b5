import csrf from '@fastify/csrf-protection';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * @fastify/csrf-protection on @fastify/cookie: `reply.generateCsrf()` for a form, and
 * `fastify.csrfProtection` as the `onRequest` of every route that changes state from a
 * page. The secret lives in a signed, HttpOnly, SameSite=Lax cookie, `Secure` when the
 * service is reached over TLS (PUBLIC_BASE_URL https).
 */
export default fp(
  async function csrfProtection(fastify: FastifyInstance) {
    await fastify.register(csrf, {
      sessionPlugin: '@fastify/cookie',
      cookieOpts: {
        signed: true,
        httpOnly: true,
        sameSite: 'lax',
        path: '/',
        secure: fastify.config.publicBaseUrl.startsWith('https://'),
      },
    });
  },
  { name: 'csrf', dependencies: ['cookie'] },
);

import { createHmac } from 'node:crypto';
import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * @fastify/cookie, for the account pages' session and CSRF cookies. Signed cookies use a
 * key derived from TOKEN_SECRET (never the secret itself, which signs file links).
 */
export default fp(
  async function cookies(fastify: FastifyInstance) {
    const secret = createHmac('sha256', fastify.config.tokenSecret).update('pdfedit cookie signing').digest();
    await fastify.register(cookie, { secret: secret.toString('base64url') });
  },
  { name: 'cookie' },
);

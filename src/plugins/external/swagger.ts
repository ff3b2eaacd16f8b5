import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { swaggerOptions } from '../../openapi/document.js';

/**
 * @fastify/swagger: builds the OpenAPI document from every route's schemas (see
 * src/openapi/document.ts for what it adds). Registered before any route: it records
 * the routes as they are added. `fastify.swagger()` returns the document after ready.
 */
export default fp(
  async function openapi(fastify: FastifyInstance) {
    await fastify.register(swagger, swaggerOptions(fastify));
  },
  { name: 'swagger' },
);

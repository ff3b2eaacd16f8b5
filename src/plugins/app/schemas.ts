import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { NAMED_SCHEMAS } from '../../schemas/named.js';

/**
 * Adds every named schema (`$id`) of src/schemas to Fastify, so routes refer to them with
 * `ref(...)`: validation and serialization resolve the reference, and the OpenAPI document
 * lists each once under components.schemas by its `$id`.
 */
export default fp(
  async function schemas(fastify: FastifyInstance) {
    for (const schema of NAMED_SCHEMAS) fastify.addSchema(schema);
  },
  { name: 'schemas' },
);

import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** Text fields of a multipart form (edits, options, password) are JSON of at most this size. */
export const MULTIPART_FIELD_MAX_BYTES = 1024 * 1024;

/**
 * @fastify/multipart, for the routes that take a multipart form (POST /v1/edit). Wrapped
 * with fastify-plugin so the parser lands in the plugin that registers it: registered
 * inside a route plugin, it adds the `multipart/form-data` parser to those routes only; elsewhere that type answers 400.
 * Each route reads the parts itself (`request.parts`) with its plan's file limit.
 */
async function multipartForms(fastify: FastifyInstance): Promise<void> {
  await fastify.register(multipart, { limits: { fieldSize: MULTIPART_FIELD_MAX_BYTES } });
}

export default fp(multipartForms, { name: 'multipart-forms' });

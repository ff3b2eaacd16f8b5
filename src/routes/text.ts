import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { openSource } from '../domain/document.js';
import { resolvePages } from '../domain/page-range.js';
import { PageRange, Source } from '../schemas/common.js';

export const TextBody = Type.Object(
  {
    source: Source,
    pages: Type.Optional(PageRange),
    layers: Type.Optional(
      Type.Array(Type.Union([Type.Literal('text'), Type.Literal('forms')]), {
        minItems: 1,
        uniqueItems: true,
      }),
    ),
  },
  { additionalProperties: false },
);
type TextBody = Static<typeof TextBody>;

/** POST /v1/text: every text span and form field of the document (free, no pages billed). */
export default async function textRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.post<{ Body: TextBody }>(
    '/v1/text',
    { schema: { body: TextBody }, onRequest: [fastify.requireKey, fastify.rateLimit] },
    async (request) => {
      const principal = request.principal!;
      const doc = await openSource(fastify, principal, request.body.source);
      const pages = resolvePages(request.body.pages, doc.info.pageCount);
      const layers = request.body.layers ?? ['text', 'forms'];
      const result = await fastify.engine.readText<{ pages: unknown[]; fields: unknown[] }>({
        pdf: doc.bytes,
        ...(doc.password !== undefined ? { password: doc.password } : {}),
        pages,
        text: layers.includes('text'),
        forms: layers.includes('forms'),
      });
      return {
        page_count: doc.info.pageCount,
        pages: layers.includes('text') ? result.pages : [],
        fields: layers.includes('forms') ? result.fields : [],
      };
    },
  );
}

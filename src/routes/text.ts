import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { engineBudgetMs, PLANS } from '../billing/plans.js';
import { openSource } from '../domain/document.js';
import { resolvePages } from '../domain/page-range.js';
import { errorResponses } from '../schemas/errors.js';
import { ref } from '../schemas/ref.js';
import { TextBody, TextResult } from '../schemas/text.js';

/** POST /v1/text: every text span and form field of the document (free, no pages billed). */
export default async function textRoutes(app: FastifyInstance): Promise<void> {
  const fastify = app.withTypeProvider<TypeBoxTypeProvider>();
  fastify.post(
    '/v1/text',
    {
      schema: {
        summary: 'Read text and forms',
        description: 'Free: no pages billed.',
        tags: ['read'],
        body: ref(TextBody),
        response: {
          200: ref(TextResult, { description: 'Spans and form fields.' }),
          ...errorResponses(400, 401, 404, 413, 422, 429, 500, 502, 504),
        },
      },
      onRequest: [fastify.requireKey, fastify.rateLimit],
    },
    async (request) => {
      const principal = request.principal!;
      const doc = await openSource(fastify, principal, request.body.source);
      const pages = resolvePages(request.body.pages, doc.info.pageCount);
      const layers = request.body.layers ?? ['text', 'forms'];
      const result = await fastify.engine.readText<{ pages: unknown[]; fields: unknown[] }>(
        {
          pdf: doc.bytes,
          ...(doc.password !== undefined ? { password: doc.password } : {}),
          pages,
          limits: PLANS[principal?.plan ?? 'keyless'].engineLimits,
          text: layers.includes('text'),
          forms: layers.includes('forms'),
        },
        engineBudgetMs(principal?.plan ?? 'keyless', fastify.config.syncTimeoutMs),
      );
      return {
        page_count: doc.info.pageCount,
        pages: layers.includes('text') ? result.pages : [],
        fields: layers.includes('forms') ? result.fields : [],
      } as typeof TextResult.static;
    },
  );
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { engineBudgetMs, PLANS } from '../billing/plans.js';
import { openSource } from '../domain/document.js';
import { resolvePages } from '../domain/page-range.js';
import { OcrCache, ocrBudgetMs, ocrCacheFor, ocrLanguages } from '../engine/ocr-cache.js';
import { readTextSplit } from '../engine/text-split.js';
import { ApiError } from '../kernel/api-error.js';
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
        description:
          'Free: no pages billed. With ocr: true, scanned pages (no text layer, or only an invisible layer that does not sit on the image) are read by OCR: their spans have source "ocr" and a confidence; such a request takes one of the plan\'s concurrent edit slots.',
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
      const body = request.body;
      if (body.ocr_languages !== undefined && body.ocr !== true)
        throw new ApiError('invalid_request', 'ocr_languages: applies only with ocr: true.');
      const languages = body.ocr ? ocrLanguages(body.ocr_languages, 'ocr_languages') : undefined;
      const doc = await openSource(fastify, principal, body.source);
      const pages = resolvePages(body.pages, doc.info.pageCount);
      const layers = body.layers ?? ['text', 'forms'];
      const cache = ocrCacheFor(fastify.config);
      const docKey = languages ? OcrCache.docKey(doc.bytes) : '';
      // A long read without OCR is split over two free engine processes (text-split.ts).
      const read = () =>
        readTextSplit(
          fastify.engine,
          {
            pdf: doc.bytes,
            ...(doc.password !== undefined ? { password: doc.password } : {}),
            pages,
            limits: PLANS[principal?.plan ?? 'keyless'].engineLimits,
            text: layers.includes('text'),
            forms: layers.includes('forms'),
            ...(languages
              ? { ocr: { languages: languages.list, cached: cache.get(docKey, languages.joined) } }
              : {}),
          },
          doc.info.pageCount,
          ocrBudgetMs(
            engineBudgetMs(principal?.plan ?? 'keyless', fastify.config.syncTimeoutMs),
            languages ? (pages?.length ?? doc.info.pageCount) : 0,
          ),
        );
      // Free, but OCR costs like an edit: it takes one of the plan's concurrent edit slots.
      const result = languages ? await fastify.editSlots(principal, read) : await read();
      if (languages && result.ocr) cache.put(docKey, result.ocr);
      return {
        page_count: doc.info.pageCount,
        pages: layers.includes('text') ? result.pages : [],
        fields: layers.includes('forms') ? result.fields : [],
      } as typeof TextResult.static;
    },
  );
}

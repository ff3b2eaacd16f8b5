import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { engineBudgetMs, PLANS } from '../billing/plans.js';
import { openSource } from '../domain/document.js';
import { resolvePages } from '../domain/page-range.js';
import { OcrCache, ocrBudgetMs, ocrCacheFor, ocrLanguages } from '../engine/ocr-cache.js';
import type { TextJson } from '../engine/tasks.js';
import { readTextSplit, readTextSplitJson } from '../engine/text-split.js';
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
    async (request, reply) => {
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
      const task = {
        pdf: doc.bytes,
        ...(doc.password !== undefined ? { password: doc.password } : {}),
        pages,
        limits: PLANS[principal?.plan ?? 'keyless'].engineLimits,
        text: layers.includes('text'),
        forms: layers.includes('forms'),
        ...(languages
          ? { ocr: { languages: languages.list, cached: cache.get(docKey, languages.joined) } }
          : {}),
      };
      const budget = ocrBudgetMs(
        engineBudgetMs(principal?.plan ?? 'keyless', fastify.config.syncTimeoutMs),
        languages ? (pages?.length ?? doc.info.pageCount) : 0,
      );
      if (!languages) {
        // Without OCR the engine's JSON goes out as it came (no parse and serialise of a
        // few MB on this process), when it is what the serializer would write (rawIsSafe).
        // A long read is split over two free engine processes (text-split.ts).
        const json = await readTextSplitJson(fastify.engine, task, doc.info.pageCount, budget);
        const raw = {
          pages: task.text ? json.pages : EMPTY,
          fields: task.forms ? json.fields : EMPTY,
        };
        if (rawIsSafe(raw.pages) && rawIsSafe(raw.fields))
          // A Buffer skips the serializer; the type provider only knows the schema's shape.
          return reply
            .type('application/json; charset=utf-8')
            .send(textResponse(doc.info.pageCount, raw) as unknown as typeof TextResult.static);
        return {
          page_count: doc.info.pageCount,
          pages: JSON.parse(raw.pages.toString('utf8')),
          fields: JSON.parse(raw.fields.toString('utf8')),
        } as typeof TextResult.static;
      }
      // Free, but OCR costs like an edit: it takes one of the plan's concurrent edit slots.
      const result = await fastify.editSlots(principal, () =>
        readTextSplit(fastify.engine, task, doc.info.pageCount, budget),
      );
      if (result.ocr) cache.put(docKey, result.ocr);
      return {
        page_count: doc.info.pageCount,
        pages: layers.includes('text') ? result.pages : [],
        fields: layers.includes('forms') ? result.fields : [],
      } as typeof TextResult.static;
    },
  );
}

const EMPTY = Buffer.from('[]');

/** `{"page_count":N,"pages":[...],"fields":[...]}`: the `TextResult` as the serializer
 * writes it (its members in the schema's order), from the engine's arrays as they are. */
export function textResponse(pageCount: number, json: TextJson): Buffer {
  return Buffer.concat([
    Buffer.from(`{"page_count":${pageCount},"pages":`),
    json.pages,
    Buffer.from(',"fields":'),
    json.fields,
    Buffer.from('}'),
  ]);
}

const NULL = Buffer.from('null');
const NULL_MEMBERS = ['"value":', '"max_len":'].map((k) => Buffer.from(k));

/**
 * Whether the engine's JSON text parses to what the response serializer would write of
 * it. The one difference: the engine writes a non-finite number as `null` (as
 * JSON.stringify does), which the serializer writes as 0 where the schema wants a number;
 * only a field's `value` and `max_len` may be null. A `null` anywhere else (or in a
 * string, after `:`, `,` or `[`) sends the answer through the serializer instead.
 */
export function rawIsSafe(json: Buffer): boolean {
  for (let at = json.indexOf(NULL); at >= 0; at = json.indexOf(NULL, at + 4)) {
    const before = json[at - 1];
    if (before !== 0x3a && before !== 0x2c && before !== 0x5b) continue; // : , [
    if (before !== 0x3a) return false;
    if (!NULL_MEMBERS.some((k) => at >= k.length && json.subarray(at - k.length, at).equals(k))) return false;
  }
  return true;
}

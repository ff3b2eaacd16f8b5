import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { engineBudgetMs, PLANS } from '../billing/plans.js';
import { openSource } from '../domain/document.js';
import { ApiError } from '../kernel/api-error.js';
import { Binary } from '../schemas/common.js';
import { errorResponses } from '../schemas/errors.js';
import { PreviewBody } from '../schemas/preview.js';
import { ref } from '../schemas/ref.js';

/** SPEC "Limits": a preview is at most 200 KB. */
export const PREVIEW_MAX_BYTES = 200 * 1024;

function checkBox(name: string, box: number[]): void {
  const [x0, y0, x1, y1] = box as [number, number, number, number];
  if (!(x1 > x0 && y1 > y0))
    throw new ApiError('invalid_request', `${name} must be [x0, y0, x1, y1] with x1 > x0 and y1 > y0.`);
}

/** POST /v1/preview: a PNG of a page or a region of it, always within 200 KB (free). */
export default async function previewRoutes(app: FastifyInstance): Promise<void> {
  const fastify = app.withTypeProvider<TypeBoxTypeProvider>();
  fastify.post(
    '/v1/preview',
    {
      schema: {
        summary: 'Render PNG',
        description: 'Free. At most 200 KB.',
        tags: ['read'],
        body: ref(PreviewBody),
        response: {
          200: { description: 'The PNG.', content: { 'image/png': { schema: Binary } } },
          ...errorResponses(400, 401, 404, 413, 422, 429, 500, 502, 504),
        },
      },
      onRequest: [fastify.requireKey, fastify.rateLimit],
    },
    async (request, reply) => {
      const { source, region, highlights } = request.body;
      const page = request.body.page ?? 1;
      if (region) checkBox('region', region);
      for (const h of highlights ?? []) checkBox('highlight', h);
      const doc = await openSource(fastify, request.principal!, source);
      if (page > doc.info.pageCount) {
        throw new ApiError(
          'invalid_request',
          `Page ${page} does not exist: the document has ${doc.info.pageCount} page(s).`,
        );
      }
      const png = await fastify.engine.render(
        {
          pdf: doc.bytes,
          ...(doc.password !== undefined ? { password: doc.password } : {}),
          page,
          limits: PLANS[request.principal?.plan ?? 'keyless'].engineLimits,
          ...(region ? { region } : {}),
          ...(highlights ? { highlights } : {}),
          width: request.body.width ?? 1000,
          maxBytes: PREVIEW_MAX_BYTES,
        },
        engineBudgetMs(request.principal?.plan ?? 'keyless', fastify.config.syncTimeoutMs),
      );
      return reply.type('image/png').header('Cache-Control', 'private, no-store').send(png);
    },
  );
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import {
  checkPreviewToken,
  PREVIEW_MARGIN_PT,
  PREVIEW_PX_PER_PT,
  PreviewCache,
  parseBox,
} from '../domain/change-preview.js';
import { findFileById } from '../domain/files.js';
import { ApiError } from '../kernel/api-error.js';
import { Binary } from '../schemas/common.js';
import { errorResponses } from '../schemas/errors.js';
import { FileParams } from '../schemas/files.js';
import { readBlobBytes } from '../store/blob-bytes.js';

/** Byte budget of one preview (the API's preview limit). */
const PREVIEW_MAX_BYTES = 200_000;
/** Widest preview in pixels (the renderer's limit). */
const MAX_WIDTH = 2000;

const PreviewQuery = Type.Object({
  side: Type.Union([Type.Literal('before'), Type.Literal('after')], {
    description: 'The document before the edit (its source file) or after (the output).',
  }),
  page: Type.Integer({ minimum: 1, maximum: 100_000, description: '1-based page of the change.' }),
  box: Type.String({ maxLength: 120, description: 'The change box, x0,y0,x1,y1 in points.' }),
  before: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        "The stored file the before side is drawn from when it is not the output's source (a job's copy of a document given by URL).",
    }),
  ),
  token: Type.String({ description: 'Signed token of the link returned by the API.' }),
});

const notFound = (fileId: string) =>
  new ApiError('not_found', `No preview of "${fileId}": the file or its source is gone or expired.`, {
    hint: 'Previews live as long as the output and its source file (24 hours).',
  });

async function previewRoutes(app: FastifyInstance): Promise<void> {
  const fastify = app.withTypeProvider<TypeBoxTypeProvider>();
  const cache = new PreviewCache();
  fastify.get(
    '/v1/files/:file_id/preview',
    {
      schema: {
        summary: 'Preview of a change',
        description:
          'The before or after picture of one change, as linked from an edit result (`before_preview_url`, `after_preview_url`). Rendered when first fetched from the stored documents.',
        tags: ['files'],
        params: FileParams,
        querystring: PreviewQuery,
        response: {
          200: { description: 'The PNG.', content: { 'image/png': { schema: Binary } } },
          ...errorResponses(400, 401, 404, 504),
        },
      },
    },
    async (request, reply) => {
      const { file_id: fileId } = request.params;
      const { side, page, box, before, token } = request.query;
      const { config } = fastify;
      const check = checkPreviewToken(config, token, fileId, side, page, box, before);
      if (check === 'expired') throw new ApiError('unauthorized', 'This preview link has expired.');
      if (check !== 'ok') {
        throw new ApiError('unauthorized', 'The token is not valid for this preview.', {
          hint: 'Use the complete link returned by the API, including every query parameter.',
        });
      }
      const area = parseBox(box);
      if (!area) throw notFound(fileId); // a link we signed always has a valid box
      // The files are looked up on every fetch, so a deleted or expired document's previews
      // go with it even when the picture is still in the cache.
      const output = await findFileById(fastify.db, fileId, config.now());
      const beforeId = before ?? output?.parent_id ?? undefined;
      let file =
        side === 'after' || !beforeId ? output : await findFileById(fastify.db, beforeId, config.now());
      // A before file named by the link is the same account's (it always is: the link was
      // signed when the output was made from it).
      if (file && output && (file.account_id !== output.account_id || file.mode !== output.mode)) {
        file = undefined;
      }
      if (!output || file?.status !== 'stored' || !file.blob_key) throw notFound(fileId);
      const key = `${fileId}|${side}|${page}|${box}|${before ?? ''}`;
      let png = cache.get(key);
      if (!png) {
        const pdf = await readBlobBytes(fastify.blobs, file.blob_key);
        if (!pdf) throw notFound(fileId);
        const m = PREVIEW_MARGIN_PT;
        const region: [number, number, number, number] = [
          Math.max(0, area[0] - m),
          Math.max(0, area[1] - m),
          area[2] + m,
          area[3] + m,
        ];
        const width = Math.min(
          MAX_WIDTH,
          Math.max(1, Math.round((region[2] - region[0]) * PREVIEW_PX_PER_PT)),
        );
        png = await fastify.engine.render({
          pdf,
          page,
          region,
          width,
          maxBytes: PREVIEW_MAX_BYTES,
        });
        cache.set(key, png);
      }
      return reply
        .type('image/png')
        .header('Cache-Control', 'private, no-store')
        .header('X-Content-Type-Options', 'nosniff')
        .send(png);
    },
  );
}

/** Lazy change previews (issue 18 item 5): rendered on first fetch from the stored before and after. */
export default fp(
  async function changePreviews(fastify: FastifyInstance) {
    await fastify.register(previewRoutes);
  },
  { name: 'change-previews', dependencies: ['db', 'engine', 'files', 'schemas'] },
);

import type { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { PLANS } from '../billing/plans.js';
import { deleteFile, findFileById, markStored, reserveFile, sweepExpiredFiles } from '../domain/files.js';
import { ApiError } from '../kernel/api-error.js';
import { randomBase62 } from '../kernel/random-token.js';
import { fileUrl, type TokenDirection, verifyFileToken } from '../net/tokens.js';
import blobsPlugin from '../plugins/app/blobs.js';
import { decodeJsonText } from '../plugins/app/json-body.js';
import rateLimitPlugin from '../plugins/app/rate-limit.js';
import { Binary } from '../schemas/common.js';
import { errorResponses } from '../schemas/errors.js';
import { FileParams, FileReservation, FileReservationBody, TokenQuery } from '../schemas/files.js';
import { ref } from '../schemas/ref.js';

const FILE_ID = /^file_[0-9A-Za-z]{1,64}$/;
const SWEEP_INTERVAL_MS = 10 * 60_000;

/** ISO 8601 UTC to the second, as API-DECISIONS writes times (`2026-11-22T10:00:00Z`). */
function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Lingering close: reads and discards what the client is still sending (bounded in bytes
 * and time) before the 413 goes out with Connection: close. Closing at once while the
 * client writes makes its socket reset before it can read the answer.
 */
function drain(body: Readable, maxBytes: number, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (body.readableEnded || body.destroyed) return resolve();
    let seen = 0;
    const finish = () => {
      clearTimeout(timer);
      body.off('data', onData);
      body.off('end', finish);
      body.off('error', finish);
      body.off('close', finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > maxBytes) finish();
    };
    const timer = setTimeout(finish, timeoutMs);
    body.on('data', onData);
    body.once('end', finish);
    body.once('error', finish);
    body.once('close', finish);
    body.resume();
  });
}

function notFound(fileId: string): ApiError {
  return new ApiError('not_found', `No file "${fileId}".`, {
    hint: 'Files expire after 24 hours and are visible only to their own account and key mode.',
  });
}

/**
 * The signed-link check of the content routes, in the SPEC's order: no token 400, a token
 * that is not valid for this file and direction 401, then (by the caller) no file 404.
 * Checking the token before the database also means an unsigned request costs no query.
 */
function checkToken(
  request: {
    params: { file_id: string };
    query: { token?: string };
    server: FastifyInstance;
  },
  dir: TokenDirection,
) {
  const token = request.query.token;
  if (!token) {
    throw new ApiError('invalid_request', 'The "token" query parameter is missing.', {
      hint: 'Use the complete link returned by the API, including ?token=….',
    });
  }
  const { config } = request.server;
  const check = verifyFileToken(config.tokenSecret, token, request.params.file_id, dir, config.now());
  if (check === 'expired') throw new ApiError('unauthorized', 'This file link has expired.');
  if (check !== 'ok') {
    throw new ApiError(
      'unauthorized',
      `The token is not valid for ${dir === 'put' ? 'uploading' : 'downloading'} this file.`,
      {
        hint: 'Upload links only upload and download links only download; use the link the API returned.',
      },
    );
  }
}

const PdfBody = { 'application/pdf': Binary, 'application/octet-stream': Binary };

async function fileRoutes(app: FastifyInstance): Promise<void> {
  const fastify = app.withTypeProvider<TypeBoxTypeProvider>();
  // Upload bodies reach the handler as the raw request stream, never buffered whole; the
  // blob store counts them against the plan's limit while they arrive. Encapsulated here,
  // so other routes keep Fastify's default (refusing) handling of these types.
  fastify.addContentTypeParser(['application/pdf', 'application/octet-stream'], (_req, payload, done) =>
    done(null, payload),
  );
  // POST /v1/files takes no members, and an empty JSON body is as good as `{}`.
  // Replaces the service's JSON parser here only (this plugin is encapsulated).
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: 4096 },
    (request, body, done) => {
      let text: string;
      try {
        text = decodeJsonText(body as Buffer, request.headers['content-type']).trim();
      } catch (err) {
        return done(err as Error, undefined);
      }
      if (text === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text));
      } catch {
        done(new ApiError('invalid_request', 'The body is not valid JSON.'), undefined);
      }
    },
  );

  fastify.post(
    '/v1/files',
    {
      onRequest: [fastify.requireKey, fastify.rateLimit],
      // No body is as good as `{}`: the schema then sees `{}` (and refuses any member).
      preValidation: async (request) => {
        request.body ??= {};
      },
      config: { openapi: { bodyOptional: true } },
      schema: {
        summary: 'Reserve an upload',
        description:
          'No body members (an empty body or `{}`). Then PUT the bytes to `upload_url` with `headers`.',
        tags: ['files'],
        body: FileReservationBody,
        response: {
          200: ref(FileReservation, { description: 'The reservation.' }),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request) => {
      const principal = request.principal!;
      const file = await reserveFile(fastify.db, principal, {
        kind: 'upload',
        contentType: 'application/pdf',
        maxBytes: PLANS[principal.plan].maxFileBytes,
        ttlMs: fastify.config.fileTtlMs,
        now: fastify.config.now(),
      });
      // The upload link lives as long as the reservation: both end with the retention window.
      return {
        file_id: file.id,
        upload_url: fileUrl(fastify.config, file.id, 'put', file.expires_at),
        headers: { 'Content-Type': 'application/pdf' },
        expires_at: isoSeconds(file.expires_at),
      };
    },
  );

  /**
   * Files are immutable: a PUT after the bytes are stored answers 400. A file id may
   * already be the source of a running job, and results are verified against the bytes
   * that were edited; replacing them in place would break both. Reserve a new file instead.
   */
  fastify.put(
    '/v1/files/:file_id/content',
    {
      config: { openapi: { body: PdfBody } },
      schema: {
        summary: 'Upload bytes',
        description: 'Files are immutable: a second upload answers 400.',
        tags: ['files'],
        params: FileParams,
        querystring: TokenQuery,
        response: {
          204: Type.Null({ description: 'Stored.' }),
          ...errorResponses(400, 401, 404, 413),
        },
      },
    },
    async (request, reply) => {
      checkToken(request, 'put');
      const { file_id: fileId } = request.params;
      const file = FILE_ID.test(fileId)
        ? await findFileById(fastify.db, fileId, fastify.config.now())
        : undefined;
      if (!file) throw notFound(fileId);
      if (file.status === 'stored') {
        throw new ApiError('invalid_request', 'This file is already uploaded; files are immutable.', {
          hint: 'Reserve a new file with POST /v1/files to upload other bytes.',
        });
      }
      // Connection: close with a 413: the client may still be sending a large body; closing
      // stops it, rather than the server reading and discarding the rest.
      const tooLarge = new ApiError(
        'too_large',
        `The document is larger than the plan allows (${file.max_bytes} bytes).`,
        { headers: { Connection: 'close' } },
      );
      const declared = Number(request.headers['content-length']);
      if (Number.isFinite(declared) && declared > file.max_bytes) throw tooLarge;
      const body = request.body as Readable | undefined;
      if (!body || typeof body.pipe !== 'function') {
        throw new ApiError('invalid_request', 'The request body is empty: send the PDF bytes.');
      }
      // A fresh blob key per attempt: two racing PUTs write different blobs and the database
      // compare-and-set picks one; the loser removes its own blob.
      const blobKey = `${file.id}-${randomBase62(8)}`;
      const stored = await fastify.blobs
        .put(blobKey, body, { maxBytes: file.max_bytes })
        .catch(async (err: unknown) => {
          if (err instanceof ApiError && err.code === 'too_large') {
            await drain(body, Math.max(file.max_bytes, 64 * 1024 * 1024), 5_000);
            throw tooLarge;
          }
          throw err;
        });
      if (stored.size === 0) {
        await fastify.blobs.delete(blobKey);
        throw new ApiError('invalid_request', 'The request body is empty: send the PDF bytes.');
      }
      if (!(await markStored(fastify.db, file.id, { blobKey, ...stored }))) {
        await fastify.blobs.delete(blobKey);
        throw new ApiError(
          'invalid_request',
          'This file was uploaded by another request; files are immutable.',
        );
      }
      reply.code(204).send(null);
    },
  );

  fastify.get(
    '/v1/files/:file_id/content',
    {
      schema: {
        summary: 'Download',
        tags: ['files'],
        params: FileParams,
        querystring: TokenQuery,
        response: {
          200: {
            description: 'The bytes.',
            content: { 'application/pdf': { schema: Binary }, 'image/png': { schema: Binary } },
          },
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request, reply) => {
      checkToken(request, 'get');
      const { file_id: fileId } = request.params;
      const file = FILE_ID.test(fileId)
        ? await findFileById(fastify.db, fileId, fastify.config.now())
        : undefined;
      const blob =
        file?.status === 'stored' && file.blob_key ? await fastify.blobs.get(file.blob_key) : undefined;
      if (!file || !blob) throw notFound(fileId);
      const isPdf = file.content_type === 'application/pdf';
      reply
        .code(200)
        .header('Content-Type', file.content_type)
        .header('Content-Length', String(blob.size))
        // Signed links are capabilities: keep the bytes out of shared caches and history.
        .header('Cache-Control', 'private, no-store')
        .header('X-Content-Type-Options', 'nosniff')
        // PDFs download (a PDF rendered inline runs in the viewer of our origin); previews show.
        .header(
          'Content-Disposition',
          `${isPdf ? 'attachment' : 'inline'}; filename="${file.id}.${isPdf ? 'pdf' : 'png'}"`,
        );
      return reply.send(blob.stream);
    },
  );

  fastify.delete(
    '/v1/files/:file_id',
    {
      onRequest: [fastify.requireKey, fastify.rateLimit],
      schema: {
        summary: 'Delete a file',
        description: 'Also deletes outputs and previews derived from it. Owner only.',
        tags: ['files'],
        params: FileParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses(401, 404, 429) },
      },
    },
    async (request, reply) => {
      const { file_id: fileId } = request.params;
      const principal = request.principal!;
      const owner = { accountId: principal.accountId, mode: principal.mode };
      const deleted =
        FILE_ID.test(fileId) &&
        (await deleteFile(fastify.db, fastify.blobs, owner, fileId, fastify.config.now()));
      if (!deleted) throw notFound(fileId);
      reply.code(204).send(null);
    },
  );
}

/**
 * Files (SPEC "Endpoints": /v1/files). Wrapped with fastify-plugin only to share the blob
 * store with the text/preview routes (resolveSource reads `fastify.blobs`); the routes and
 * their body parsers sit in an encapsulated child and touch nothing outside it.
 */
export default fp(
  async function files(fastify: FastifyInstance) {
    if (!fastify.hasDecorator('blobs')) await fastify.register(blobsPlugin);
    if (!fastify.hasDecorator('rateLimit')) await fastify.register(rateLimitPlugin);
    await fastify.register(fileRoutes);
    // Retention (SPEC rule 15): expired files are refused at once by their expires_at; the
    // sweep then frees their blobs. Every process sweeps; the statements are idempotent.
    let timer: NodeJS.Timeout | undefined;
    fastify.addHook('onReady', async () => {
      timer = setInterval(() => {
        sweepExpiredFiles(fastify.db, fastify.blobs, fastify.config.now()).catch((err: unknown) =>
          fastify.log.error({ err }, 'file retention sweep failed'),
        );
      }, SWEEP_INTERVAL_MS);
      timer.unref();
    });
    fastify.addHook('onClose', async () => clearInterval(timer));
  },
  { name: 'files', dependencies: ['db', 'auth', 'schemas'] },
);

import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from './config.js';
import { ApiError } from './kernel/api-error.js';
import auth from './plugins/app/auth.js';
import db from './plugins/app/db.js';
import editSlots from './plugins/app/edit-slots.js';
import engine from './plugins/app/engine.js';
import errors from './plugins/app/errors.js';
import jsonBody from './plugins/app/json-body.js';
import rateLimit from './plugins/app/rate-limit.js';
import requestId from './plugins/app/request-id.js';
import retention from './plugins/app/retention.js';
import schemas from './plugins/app/schemas.js';
import { buildValidator } from './plugins/app/validators.js';
import cookie from './plugins/external/cookie.js';
import csrf from './plugins/external/csrf.js';
import swagger from './plugins/external/swagger.js';
import jobsPlugin from './queue/plugin.js';
import account from './routes/account.js';
import accountPages from './routes/account-pages.js';
import batch from './routes/batch.js';
import billing, { payments } from './routes/billing.js';
import changePreviews from './routes/change-previews.js';
import docs from './routes/docs.js';
import edit from './routes/edit.js';
import files from './routes/files.js';
import fonts from './routes/fonts.js';
import health from './routes/health.js';
import jobRoutes from './routes/jobs.js';
import mcp from './routes/mcp.js';
import preview from './routes/preview.js';
import source from './routes/source.js';
import text from './routes/text.js';
import webhookSecret from './routes/webhook-secret.js';

export interface AppOptions {
  config: Config;
}

/** The whole service as one Fastify plugin: tests inject into it, server.ts boots it. */
export default async function app(fastify: FastifyInstance, opts: AppOptions): Promise<void> {
  fastify.decorate('config', opts.config);
  await fastify.register(requestId);
  await fastify.register(errors);
  await fastify.register(jsonBody);
  // Before every route: the named schemas they refer to, and @fastify/swagger, which
  // records every route for /openapi.json.
  await fastify.register(schemas);
  await fastify.register(swagger);
  await fastify.register(docs);
  await fastify.register(cookie);
  await fastify.register(csrf);
  await fastify.register(db);
  await fastify.register(auth);
  await fastify.register(rateLimit);
  // The payment provider, and the hold of a disputed account (a hook before every route).
  await fastify.register(payments);
  await fastify.register(editSlots);
  await fastify.register(retention);
  await fastify.register(engine);
  await fastify.register(health);
  await fastify.register(files);
  await fastify.register(text);
  await fastify.register(preview);
  await fastify.register(changePreviews);
  await fastify.register(jobsPlugin);
  await fastify.register(edit);
  await fastify.register(batch);
  await fastify.register(jobRoutes);
  await fastify.register(account);
  await fastify.register(source);
  await fastify.register(fonts);
  await fastify.register(billing);
  await fastify.register(accountPages);
  await fastify.register(webhookSecret);
  await fastify.register(mcp);
}

/** A URL as logged: the value of every `token` query parameter replaced. */
export function redactTokens(url: string): string {
  return url.replace(/([?&]token=)[^&#]*/gi, '$1[redacted]');
}

export function serverOptions(config: Config): FastifyServerOptions {
  return {
    logger: {
      level: config.logLevel,
      redact: ['req.headers.authorization'],
      // Sign-in links and signed file links carry their credential in `token`: never logged.
      serializers: {
        req: (req: { method: string; url: string; hostname?: string; ip?: string }) => ({
          method: req.method,
          url: redactTokens(req.url),
          hostname: req.hostname,
          remoteAddress: req.ip,
        }),
      },
    },
    genReqId: () => `req_${randomBytes(12).toString('hex')}`,
    requestIdHeader: false,
    // JSON bodies of the API are small; documents travel through uploads or multipart.
    bodyLimit: 10 * 1024 * 1024,
    connectionTimeout: 120_000,
    requestTimeout: 300_000,
    keepAliveTimeout: 72_000,
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    ajv: {
      // Unknown members are refused, never silently dropped (API-DECISIONS.md conventions).
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
    },
    // Bodies are validated without type coercion (see validators.ts).
    schemaController: { compilersFactory: { buildValidator: buildValidator() } },
    routerOptions: { ignoreTrailingSlash: true },
    // Requests Node's HTTP parser refuses (bad header bytes, oversized headers) never reach
    // a route; they still get the error envelope rather than Fastify's default body.
    clientErrorHandler: (err, socket) => {
      if (!socket.writable || (err as NodeJS.ErrnoException).code === 'ECONNRESET') return socket.destroy();
      const body = JSON.stringify(new ApiError('invalid_request', 'The HTTP request is malformed.').toBody());
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: req_${randomBytes(12).toString('hex')}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      );
    },
  };
}

/** Builds a ready service instance (without listening). */
export async function buildServer(config: Config, extra: Partial<FastifyServerOptions> = {}) {
  const fastify = Fastify({ ...serverOptions(config), ...extra });
  // Registered without encapsulation so the root instance (tests, boot) sees the decorators.
  await fastify.register(fp(app, { name: 'pdfedit' }), { config });
  await fastify.ready();
  return fastify;
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
  }
}

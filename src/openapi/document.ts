import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { errorResponses, headers, IDEMPOTENCY_HEADER, parameters, successHeaders } from './components.js';
import { plannedOperations } from './planned.js';

export const API_VERSION = '0.1.0';

type Json = Record<string, unknown>;

/**
 * What the OpenAPI document adds to a route's own `schema` besides what @fastify/swagger
 * reads from it: bodies Fastify does not validate (multipart forms, raw uploads), so they
 * are declared for the document only. Set as `config: { openapi: { body: {...} } }`.
 */
export interface RouteDocs {
  /** Media type → schema of request bodies that are not JSON (the JSON body stays `schema.body`). */
  body?: Record<string, unknown>;
  /** The body may be left out (the route then reads it as `{}`). */
  bodyOptional?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    openapi?: RouteDocs;
  }
}

// Markers the route transform leaves for finishDocument (removed from the document there).
const RATE_LIMITED = 'x-pdfedit-rate-limited';
const BODY_OPTIONAL = 'x-pdfedit-body-optional';

/**
 * JSON Schema of TypeBox (draft-07 style) to OpenAPI 3.1 (JSON Schema 2020-12): tuples as
 * `prefixItems` (2020-12 `items` is one schema, never an array).
 */
function to2020(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(to2020);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value as Json)) {
    if (k === 'additionalItems') continue;
    if (k === 'items' && Array.isArray(v)) {
      out.prefixItems = to2020(v);
      out.items = false;
      continue;
    }
    out[k] = to2020(v);
  }
  return out;
}

function hooksOf(route: RouteOptions): unknown[] {
  const h = route.onRequest;
  return h === undefined ? [] : Array.isArray(h) ? h : [h];
}

/** "Edit a PDF" → "EditAPDF": the operation id when a route does not name one (as since 0.1.0). */
function operationIdOf(summary: string): string {
  return summary.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''));
}

/**
 * Per route: security and rate-limit headers come from the hooks the route really runs
 * (requireKey, optionalKey, rateLimit), so the document cannot claim what the code does
 * not do; non-JSON bodies come from `config.openapi.body`.
 */
function transformRoute(fastify: FastifyInstance) {
  return ({ schema, url, route }: { schema: Json; url: string; route: RouteOptions }) => {
    const hooks = hooksOf(route);
    const doc: Json = { ...schema };
    if (doc.security === undefined) {
      doc.security = hooks.includes(fastify.requireKey)
        ? [{ bearerAuth: [] }]
        : // OpenAPI spells "optional" as an alternative with no requirement: `{}`.
          hooks.includes(fastify.optionalKey)
          ? [{ bearerAuth: [] }, {}]
          : [];
    }
    if (hooks.includes(fastify.rateLimit)) doc[RATE_LIMITED] = true;
    if (route.config?.openapi?.bodyOptional) doc[BODY_OPTIONAL] = true;
    const extra = route.config?.openapi?.body;
    if (extra) {
      const declared = schema.body as Json | undefined;
      const content: Json = declared?.content
        ? { ...(declared.content as Json) }
        : declared
          ? { 'application/json': { schema: declared } }
          : {};
      for (const [type, s] of Object.entries(extra)) content[type] = { schema: s };
      doc.body = { content };
    }
    if (doc.operationId === undefined && typeof doc.summary === 'string') {
      doc.operationId = operationIdOf(doc.summary);
    }
    return { schema: doc, url };
  };
}

/**
 * The document as a whole, once @fastify/swagger has read every route: error answers
 * point at the shared `E<status>` responses, success answers list the headers they carry,
 * the Idempotency-Key header is the shared parameter, planned operations fill the gaps.
 */
function finishDocument({ openapiObject }: { openapiObject: Json }): Json {
  const paths = (openapiObject.paths ?? {}) as Record<string, Record<string, Json>>;
  for (const [path, ops] of Object.entries(plannedOperations)) {
    for (const [method, op] of Object.entries(ops)) {
      paths[path] ??= {};
      paths[path][method] ??= structuredClone({ ...op, 'x-pdfedit-status': 'planned' });
    }
  }
  for (const ops of Object.values(paths)) {
    for (const op of Object.values(ops)) {
      const rateLimited = op[RATE_LIMITED] === true;
      delete op[RATE_LIMITED];
      if (op[BODY_OPTIONAL] === true && op.requestBody) (op.requestBody as Json).required = false;
      delete op[BODY_OPTIONAL];
      const responses = (op.responses ?? {}) as Record<string, Json>;
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) >= 400) responses[status] = { $ref: `#/components/responses/E${status}` };
        else response.headers = { ...successHeaders(rateLimited), ...((response.headers as Json) ?? {}) };
      }
      if (Array.isArray(op.parameters)) {
        op.parameters = (op.parameters as Json[]).map((p) =>
          p.in === 'header' && String(p.name).toLowerCase() === IDEMPOTENCY_HEADER
            ? { $ref: '#/components/parameters/IdempotencyKey' }
            : p,
        );
      }
    }
  }
  const components = (openapiObject.components ?? {}) as Json;
  return to2020({
    ...openapiObject,
    paths,
    components: {
      ...components,
      headers,
      parameters,
      responses: errorResponses(),
    },
  }) as Json;
}

/** Options of @fastify/swagger for this service: OpenAPI 3.1, info.version 0.1.0. */
export function swaggerOptions(fastify: FastifyInstance): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'pdfedit',
        version: API_VERSION,
        summary: 'Edit the text inside existing PDFs in their own fonts, every change verified by rendering.',
        description:
          'JSON over HTTP. Send `Authorization: Bearer sk_live_…` (or a free `sk_test_…` key). Every response ' +
          'carries `X-Request-Id`; operations with rate limits carry `X-RateLimit-Limit`, `X-RateLimit-Remaining` ' +
          'and `X-RateLimit-Reset` (Unix seconds); a 429 adds `Retry-After`. Errors are ' +
          '`{"error": {"code", "message", "hint"}}` with a closed list of codes. Coordinates are PDF points, ' +
          'origin top-left of the displayed page; pages are 1-based. Unknown JSON members are refused (400). ' +
          'Test keys: separate objects and a separate allowance (the free plan), outputs carry a SAMPLE mark. ' +
          '`/v1` only grows; a breaking change gets `/v2`.',
        license: { name: 'AGPL-3.0-only', identifier: 'AGPL-3.0-only' },
      },
      servers: [{ url: '/' }],
      tags: ['service', 'account', 'files', 'edit', 'jobs', 'read', 'billing'].map((name) => ({ name })),
      webhooks: {
        jobDone: {
          post: {
            summary: 'job.done (to options.webhook_url)',
            description:
              'Sent when an edit job or a batch finishes. Headers: `X-Signature` = hex HMAC-SHA256 of the raw ' +
              'body keyed with the account webhook secret (`pdfedit admin webhook-secret --email E`); ' +
              '`webhook-id` (the same on every attempt), `webhook-timestamp` (Unix seconds of this attempt) and ' +
              '`webhook-signature` = `v1,` + hex HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`. ' +
              'Compare in constant time over the exact bytes received; refuse timestamps more than a few ' +
              'minutes old and ids already seen, so a captured delivery cannot be replayed. Answer 2xx within ' +
              '10 seconds; anything else (a redirect is not followed) is retried after 1, 5 and 30 minutes ' +
              'with the same id and body, then given up.',
            parameters: [
              { name: 'X-Signature', in: 'header', required: true, schema: { type: 'string' } },
              { name: 'webhook-id', in: 'header', required: true, schema: { type: 'string' } },
              { name: 'webhook-timestamp', in: 'header', required: true, schema: { type: 'string' } },
              { name: 'webhook-signature', in: 'header', required: true, schema: { type: 'string' } },
            ],
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/JobDone' } } },
            },
            responses: { 200: { description: 'Any 2xx acknowledges the delivery.' } },
          },
        },
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'sk_live_… or sk_test_…' },
        },
      },
    },
    // Named schemas (`$id`) keep their names as components instead of `def-N`.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
    // OpenAPI 3.1 is JSON Schema 2020-12: `const` stays `const`.
    convertConstToEnum: false,
    // biome-ignore lint/suspicious/noExplicitAny: the plugin types the hook with its own schema type
    transform: transformRoute(fastify) as any,
    // biome-ignore lint/suspicious/noExplicitAny: the plugin's document types are a union of versions
    transformObject: finishDocument as any,
  };
}

import { errorResponses, headers, parameters, schemas } from './components.js';
import { paths } from './paths.js';

export const API_VERSION = '0.1.0';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * JSON Schema of TypeBox (draft-07 style) to OpenAPI 3.1 (JSON Schema 2020-12): symbols
 * dropped, tuples as `prefixItems` (2020-12 `items` is one schema, never an array).
 */
function to2020(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(to2020);
  if (value === null || typeof value !== 'object') return value;
  const src = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(src)) {
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

/** `/v1/files/:file_id` (Fastify) as `/v1/files/{file_id}` (OpenAPI). */
export function openApiPath(fastifyPath: string): string {
  return fastifyPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

const selfPaths = {
  '/openapi.json': {
    get: {
      summary: 'This document',
      operationId: 'openapiDocument',
      tags: ['service'],
      security: [],
      responses: {
        200: { description: 'OpenAPI 3.1.', content: { 'application/json': { schema: { type: 'object' } } } },
      },
    },
  },
  '/docs': {
    get: {
      summary: 'Human-readable reference',
      operationId: 'docsPage',
      tags: ['service'],
      security: [],
      responses: {
        200: { description: 'HTML page.', content: { 'text/html': { schema: { type: 'string' } } } },
      },
    },
  },
};

/**
 * The OpenAPI 3.1 document of the service. `implemented` (METHOD + OpenAPI path, e.g.
 * `POST /v1/edit`) marks operations this deployment does not serve yet with
 * `x-pdfedit-status: planned`, so clients and the schemathesis run can tell them apart.
 */
export function openApiDocument(opts: { implemented?: Set<string> } = {}): Record<string, unknown> {
  const allPaths: Record<string, Record<string, unknown>> = { ...paths, ...selfPaths };
  const outPaths: Record<string, unknown> = {};
  for (const [p, ops] of Object.entries(allPaths)) {
    const outOps: Record<string, unknown> = {};
    for (const m of METHODS) {
      const o = ops[m] as Record<string, unknown> | undefined;
      if (!o) continue;
      const planned = opts.implemented && !opts.implemented.has(`${m.toUpperCase()} ${p}`);
      outOps[m] = planned ? { ...o, 'x-pdfedit-status': 'planned' } : o;
    }
    outPaths[p] = outOps;
  }
  return to2020({
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
    paths: outPaths,
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
      schemas,
      headers,
      parameters,
      responses: errorResponses(),
    },
  }) as Record<string, unknown>;
}

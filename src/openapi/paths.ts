import { rlHeaders } from './components.js';

/**
 * Every operation of SPEC.md "Endpoints". Built from small helpers so that the auth,
 * rate-limit headers and error statuses of an operation are stated once, as the SPEC
 * lists them.
 */

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json) => ({ 'application/json': { schema } });
const err = (statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [String(s), { $ref: `#/components/responses/E${s}` }]));
const binary = { type: 'string', contentMediaType: 'application/octet-stream' };

interface Op {
  summary: string;
  description?: string;
  tag: string;
  /** `key` (Bearer), `optional-key` (Bearer, or none for the keyless tier), `none`,
   * `token` (signed link) or `signature` (provider). */
  auth: 'key' | 'optional-key' | 'none' | 'token' | 'signature';
  rl?: boolean;
  parameters?: Json[];
  requestBody?: Json;
  ok: Record<string, Json>;
  errors: number[];
}

function op(o: Op): Json {
  const headers = o.rl ? rlHeaders : { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
  const ok = Object.fromEntries(Object.entries(o.ok).map(([status, r]) => [status, { headers, ...r }]));
  return {
    summary: o.summary,
    ...(o.description ? { description: o.description } : {}),
    operationId: o.summary.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) =>
      c ? c.toUpperCase() : '',
    ),
    tags: [o.tag],
    // OpenAPI spells "optional" as an alternative with no requirement: `{}`.
    security:
      o.auth === 'key' ? [{ bearerAuth: [] }] : o.auth === 'optional-key' ? [{ bearerAuth: [] }, {}] : [],
    ...(o.parameters ? { parameters: o.parameters } : {}),
    ...(o.requestBody ? { requestBody: o.requestBody } : {}),
    responses: { ...ok, ...err(o.errors) },
  };
}

const pid = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const idem = pid('IdempotencyKey');

export const paths: Record<string, Record<string, Json>> = {
  '/healthz': {
    get: op({
      summary: 'Health check',
      tag: 'service',
      auth: 'none',
      ok: { 200: { description: 'The API and its database answer.', content: json(ref('Health')) } },
      errors: [500],
    }),
  },
  '/source': {
    get: op({
      summary: 'Engine source archive',
      description:
        'gzip tar of the engine (crates, native addon, engine worker), its Dockerfile and the AGPL-3.0 licence. Not the gateway.',
      tag: 'service',
      auth: 'key',
      rl: true,
      ok: { 200: { description: 'The archive.', content: { 'application/gzip': { schema: binary } } } },
      errors: [401, 429],
    }),
  },
  '/v1/limits': {
    get: op({
      summary: 'Plan limits',
      tag: 'account',
      auth: 'key',
      rl: true,
      ok: { 200: { description: 'What the calling key may do.', content: json(ref('Limits')) } },
      errors: [401, 429],
    }),
  },
  '/v1/usage': {
    get: op({
      summary: 'Usage of the period',
      description: 'Calendar month (UTC). Allowance first, then credit-pack pages; an OCR page counts five.',
      tag: 'account',
      auth: 'key',
      rl: true,
      ok: { 200: { description: 'Pages used and remaining.', content: json(ref('Usage')) } },
      errors: [401, 429],
    }),
  },
  '/v1/files': {
    post: op({
      summary: 'Reserve an upload',
      description:
        'No body members (an empty body or `{}`). Then PUT the bytes to `upload_url` with `headers`.',
      tag: 'files',
      auth: 'key',
      rl: true,
      requestBody: {
        required: false,
        content: json({ type: 'object', additionalProperties: false, maxProperties: 0 }),
      },
      ok: { 200: { description: 'The reservation.', content: json(ref('FileReservation')) } },
      errors: [400, 401, 429],
    }),
  },
  '/v1/files/{file_id}': {
    delete: op({
      summary: 'Delete a file',
      description: 'Also deletes outputs and previews derived from it. Owner only.',
      tag: 'files',
      auth: 'key',
      rl: true,
      parameters: [pid('FileId')],
      ok: { 204: { description: 'Deleted.' } },
      errors: [401, 404, 429],
    }),
  },
  '/v1/files/{file_id}/content': {
    get: op({
      summary: 'Download',
      tag: 'files',
      auth: 'token',
      parameters: [pid('FileId'), pid('Token')],
      ok: {
        200: {
          description: 'The bytes.',
          content: { 'application/pdf': { schema: binary }, 'image/png': { schema: binary } },
        },
      },
      errors: [400, 401, 404],
    }),
    put: op({
      summary: 'Upload bytes',
      description: 'Files are immutable: a second upload answers 400.',
      tag: 'files',
      auth: 'token',
      parameters: [pid('FileId'), pid('Token')],
      requestBody: {
        required: true,
        content: { 'application/pdf': { schema: binary }, 'application/octet-stream': { schema: binary } },
      },
      ok: { 204: { description: 'Stored.' } },
      errors: [400, 401, 404, 413],
    }),
  },
  '/v1/edit': {
    post: op({
      summary: 'Edit a PDF',
      description:
        'JSON (`source`, `edits`, `options`) or multipart (`file`, `edits`, `options`, `password`). ' +
        'Over the sync page limit (free 20 pages, starter 30, growth and scale 50), with `options.async` ' +
        'or with `options.webhook_url` the answer is 202 with a job: poll GET /v1/jobs/{job_id} or ' +
        'receive `job.done`. ' +
        'Quota is checked before any work against the document page count (the worst case). ' +
        'Asynchronous edits need a key. ' +
        'The key is optional: without an Authorization header the call runs on the keyless free tier ' +
        '(20 pages a day per client address, IPv6 counted by /64; 10 requests a minute; `source.url` or ' +
        'multipart, not `file_id`). Outputs of keyless calls and of `sk_test_` keys carry a small light-grey ' +
        '"SAMPLE" mark in a corner of every page (it extracts as the text SAMPLE) and the warning `sample_mark`; ' +
        'live keys never get it.',
      tag: 'edit',
      auth: 'optional-key',
      rl: true,
      parameters: [idem],
      requestBody: {
        required: true,
        content: {
          ...json(ref('EditRequest')),
          'multipart/form-data': {
            schema: {
              type: 'object',
              required: ['file', 'edits'],
              properties: {
                file: binary,
                edits: { type: 'string', description: 'JSON array of edit objects.' },
                options: { type: 'string', description: 'JSON object of options.' },
                password: { type: 'string' },
              },
            },
          },
        },
      },
      ok: {
        200: {
          description: 'The result, or the PDF with `Accept: application/pdf`.',
          content: { ...json(ref('EditResult')), 'application/pdf': { schema: binary } },
        },
        202: { description: 'Queued as a job.', content: json(ref('Queued')) },
      },
      errors: [400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 502, 504],
    }),
  },
  '/v1/jobs': {
    get: op({
      summary: 'List jobs',
      description: "The calling key's jobs (its account and mode), newest first. Jobs are kept 30 days.",
      tag: 'jobs',
      auth: 'key',
      rl: true,
      parameters: [
        { name: 'since', in: 'query', schema: { type: 'string', format: 'date-time' } },
        { name: 'status', in: 'query', schema: { type: 'string' } },
        {
          name: 'cursor',
          in: 'query',
          description: 'job_id of the last row of the previous page.',
          schema: { type: 'string' },
        },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
      ],
      ok: { 200: { description: 'Newest first.', content: json(ref('JobList')) } },
      errors: [400, 401, 429],
    }),
  },
  '/v1/jobs/{job_id}': {
    get: op({
      summary: 'Get a job',
      tag: 'jobs',
      auth: 'key',
      rl: true,
      parameters: [pid('JobId')],
      ok: {
        200: {
          description: 'Running: status and progress; finished: the edit result (plus records for a batch).',
          content: json(ref('JobDetail')),
        },
      },
      errors: [401, 404, 429],
    }),
  },
  '/v1/batch': {
    post: op({
      summary: 'Batch edit',
      description:
        'The template edited once per record, as a job. `records` (inline objects) or `records_url` ' +
        '(a CSV with a header row naming the placeholders, fetched like source.url). `{name}` in find, ' +
        'replace, text and form values takes the record value; a record without a value for a ' +
        'placeholder fails on its own (records[].error), the batch goes on. Records per batch: free 50, ' +
        'starter 1,000, growth 10,000, scale 50,000 (413 over it). Quota is checked against every page ' +
        'of every record (402 refuses the whole batch); the batch is billed once, for the pages its ' +
        'records touched. `options.webhook_url` receives `job.done`.',
      tag: 'edit',
      auth: 'key',
      rl: true,
      parameters: [idem],
      requestBody: { required: true, content: json(ref('BatchRequest')) },
      ok: { 202: { description: 'Queued; one output per record.', content: json(ref('Queued')) } },
      errors: [400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 502, 504],
    }),
  },
  '/v1/text': {
    post: op({
      summary: 'Read text and forms',
      description: 'Free: no pages billed.',
      tag: 'read',
      auth: 'key',
      rl: true,
      requestBody: { required: true, content: json(ref('TextRequest')) },
      ok: { 200: { description: 'Spans and form fields.', content: json(ref('TextResult')) } },
      errors: [400, 401, 404, 413, 422, 429, 500, 502, 504],
    }),
  },
  '/v1/preview': {
    post: op({
      summary: 'Render PNG',
      description: 'Free. At most 200 KB.',
      tag: 'read',
      auth: 'key',
      rl: true,
      requestBody: { required: true, content: json(ref('PreviewRequest')) },
      ok: { 200: { description: 'The PNG.', content: { 'image/png': { schema: binary } } } },
      errors: [400, 401, 404, 413, 422, 429, 500, 502, 504],
    }),
  },
  '/v1/fonts': {
    get: op({
      summary: 'List fonts',
      tag: 'read',
      auth: 'key',
      rl: true,
      ok: { 200: { description: 'Fonts the deployment writes with.', content: json(ref('Fonts')) } },
      errors: [401, 429],
    }),
  },
  '/v1/billing/webhook/{provider}': {
    post: op({
      summary: 'Payment provider callback',
      description: 'Authenticated by the provider signature header, not a key. Each event is applied once.',
      tag: 'billing',
      auth: 'signature',
      parameters: [{ name: 'provider', in: 'path', required: true, schema: { type: 'string' } }],
      requestBody: { required: true, content: json({ type: 'object' }) },
      ok: { 200: { description: 'Acknowledged.', content: json(ref('Ack')) } },
      errors: [400, 401],
    }),
  },
  '/v1/billing/checkout': {
    post: op({
      summary: 'Create checkout link',
      tag: 'billing',
      auth: 'key',
      rl: true,
      requestBody: { required: true, content: json(ref('CheckoutRequest')) },
      ok: {
        200: { description: 'Checkout URL bound to the account.', content: json(ref('CheckoutResult')) },
      },
      errors: [400, 401, 429],
    }),
  },
};

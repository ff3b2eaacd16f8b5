import { Type } from '@sinclair/typebox';
import { ERROR_STATUS, type ErrorCode } from '../domain/error-codes.js';
import { MAX_KEY_LENGTH } from '../domain/idempotency.js';
import { PreviewBody } from '../routes/preview.js';
import { TextBody } from '../routes/text.js';
import { LimitsResponse, UsageResponse } from '../schemas/account.js';
import { BatchBody } from '../schemas/batch.js';
import { Box, Source } from '../schemas/common.js';
import { EditBody } from '../schemas/edit.js';
import { FileReservation } from '../schemas/files.js';
import { FontsResponse } from '../schemas/fonts.js';

/**
 * Reusable parts of the OpenAPI document: schemas (the TypeBox schemas the routes validate
 * with, where a route exists; written from SPEC.md and API-DECISIONS.md otherwise),
 * headers, parameters and the error responses of the closed code list.
 */

const Iso = Type.String({ format: 'date-time', description: 'ISO 8601 UTC, e.g. 2026-11-22T10:00:00Z.' });
const Link = Type.Object(
  { url: Type.String(), expires_at: Iso },
  { description: 'Signed link, valid 24 hours.' },
);

const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(
        (Object.keys(ERROR_STATUS) as ErrorCode[]).map((c) => Type.Literal(c)),
        { description: 'Closed list: switch on it.' },
      ),
      message: Type.String(),
      hint: Type.String(),
    }),
  },
  { description: 'Every error. Some codes add members beside `error` (edit_failed: `failed`).' },
);

const Change = Type.Object(
  {
    page: Type.Integer(),
    op: Type.String(),
    find: Type.Optional(Type.String()),
    replace: Type.Optional(Type.String()),
    font_source: Type.Optional(
      Type.String({
        description:
          'exact-embedded, exact-declared, metric-twin, look-alike, raster or none; for a font picked with style.font, its kind in GET /v1/fonts.',
      }),
    ),
    font_used: Type.Optional(Type.String()),
    verified: Type.Optional(Type.Boolean()),
    collateral_pixels: Type.Optional(Type.Integer()),
    box: Type.Optional(Box),
    before_preview_url: Type.Optional(Type.String()),
    after_preview_url: Type.Optional(Type.String()),
    text: Type.Optional(Type.String({ description: 'insert: the text added.' })),
    field: Type.Optional(Type.String({ description: 'form: the fully qualified field name.' })),
    value: Type.Optional(
      Type.Union([Type.String(), Type.Boolean(), Type.Array(Type.String()), Type.Null()], {
        description:
          'form: the value as read back from the output (checkbox: boolean; radio: the export value; multi-select list: array).',
      }),
    ),
  },
  {
    description:
      'One applied edit (form: one entry per field that landed; font_source "none" for checkboxes and radios).',
  },
);

const Place = Type.Object({
  index: Type.Integer({ description: 'The redact edit.' }),
  kind: Type.String(),
  page: Type.Union([Type.Integer(), Type.Null()]),
  where: Type.String(),
});

const EditResult = Type.Object(
  {
    status: Type.Union([Type.Literal('done'), Type.Literal('partial'), Type.Literal('failed')]),
    changes: Type.Optional(Type.Array(Change)),
    unmatched: Type.Optional(Type.Array(Type.Object({}))),
    failed: Type.Optional(
      Type.Array(Type.Object({}), {
        description:
          'Edits found but not applied, each with a stable reason: collateral_change, overflow (also: a reflowed paragraph needs more room than is blank below it), missing_glyphs, no_metric_font, reflow_unsupported (fit: reflow on a paragraph that is not simple: several fonts, sizes or colours, not horizontal, inside a form XObject, hyphenated line ends; or with a style override), …',
      }),
    ),
    warnings: Type.Optional(Type.Array(Type.Any())),
    flatten_skipped: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'Form flatten: the fields left live because their value has no appearance to draw (the warning flatten_skipped names them here).',
      }),
    ),
    removed: Type.Optional(
      Type.Array(Place, {
        description:
          'Redaction: each place outside the page text the string was removed from (image pixels, annotation, form_field, metadata, xmp, outline, structure, page_label, embedded_file, javascript, xfa).',
      }),
    ),
    residual: Type.Optional(
      Type.Array(Type.Intersect([Place, Type.Object({ text: Type.String() })]), {
        description:
          'Redaction: every place in the saved output where the string still occurs (page_text, stream, …). Empty when the redaction is complete.',
      }),
    ),
    output: Type.Optional(Type.Union([Link, Type.Null()])),
    usage: Type.Optional(Type.Object({})),
    records: Type.Optional(Type.Array(Type.Object({}))),
    timings: Type.Optional(
      Type.Object(
        {
          parse_ms: Type.Number({ description: 'Opening the document and reading page content.' }),
          edit_ms: Type.Number({ description: 'Finding matches, planning and writing new content.' }),
          render_ms: Type.Number({ description: 'Rendering pages before and after each edit.' }),
          diff_ms: Type.Number({ description: 'Pixel comparison and preview crops.' }),
          save_ms: Type.Number({ description: 'Writing (and re-encrypting) the document.' }),
          mark_ms: Type.Number({ description: 'Adding the SAMPLE mark (0 without one).' }),
          total_ms: Type.Number({ description: 'The whole engine call.' }),
        },
        {
          description:
            'Server-side time of the engine call per stage, in milliseconds (informational; not a ' +
            'stable performance promise).',
        },
      ),
    ),
  },
  { description: 'Result of an edit (200 of POST /v1/edit, and the body of a finished job).' },
);

const JobStatus = Type.Union(
  ['queued', 'running', 'done', 'partial', 'failed'].map((s) => Type.Literal(s)),
  {
    description: 'queued → running → done | partial | failed.',
  },
);
const jobFields = {
  job_id: Type.String(),
  status: JobStatus,
  kind: Type.Union([Type.Literal('edit'), Type.Literal('batch')]),
  created_at: Iso,
  started_at: Type.Union([Iso, Type.Null()]),
  finished_at: Type.Union([Iso, Type.Null()]),
  pages_billed: Type.Integer(),
  changes_count: Type.Integer(),
  progress: Type.Object(
    { done: Type.Integer(), total: Type.Integer() },
    { description: 'Pages for an edit (done when it finishes), records for a batch.' },
  ),
};
const Job = Type.Object(jobFields, { description: 'A job list entry.' });

const BatchRecord = Type.Object(
  {
    index: Type.Integer({ description: '0-based position of the record (CSV: data row, header excluded).' }),
    status: Type.Union([Type.Literal('done'), Type.Literal('partial'), Type.Literal('failed')]),
    output: Type.Union([Link, Type.Null()]),
    changes: Type.Array(Change),
    unmatched: Type.Array(Type.Object({})),
    failed: Type.Array(Type.Object({})),
    warnings: Type.Array(Type.Any()),
    flatten_skipped: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Form flatten: the fields left live (warning flatten_skipped).',
      }),
    ),
    error: Type.Optional(
      Type.Object(
        { code: Type.String(), message: Type.String(), hint: Type.String() },
        { description: 'Why this record failed as a whole (a missing placeholder: invalid_request).' },
      ),
    ),
  },
  { description: 'One record of a batch: its own output document.' },
);

const JobDetail = Type.Object(
  {
    ...jobFields,
    changes: Type.Optional(Type.Array(Change)),
    unmatched: Type.Optional(Type.Array(Type.Object({}))),
    failed: Type.Optional(Type.Array(Type.Object({}))),
    warnings: Type.Optional(Type.Array(Type.Any())),
    output: Type.Optional(Type.Union([Link, Type.Null()])),
    usage: Type.Optional(Type.Object({ pages_billed: Type.Integer(), remaining: Type.Integer() })),
    records: Type.Optional(Type.Array(BatchRecord)),
    error: Type.Optional(
      Type.Object(
        { code: Type.String(), message: Type.String(), hint: Type.String() },
        {
          description:
            'A job that could not run at all (its input expired, the engine refused the document).',
        },
      ),
    ),
  },
  {
    description:
      'While queued or running: the job fields. Finished: also the body a synchronous edit returns ' +
      '(for a batch the top level sums up and each record has its own output in `records`).',
  },
);

const JobDone = Type.Object(
  {
    ...JobDetail.properties,
    event: Type.Literal('job.done'),
  },
  { description: 'The finished job (GET /v1/jobs/{job_id}) plus `event`.' },
);

export const schemas = {
  Error: ErrorEnvelope,
  Source,
  EditRequest: EditBody,
  EditResult,
  Queued: Type.Object({ job_id: Type.String() }, { description: 'The work continues as a job.' }),
  Job,
  JobDetail,
  JobDone,
  BatchRecord,
  JobList: Type.Object({ data: Type.Array(Job), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
  BatchRequest: BatchBody,
  TextRequest: TextBody,
  TextResult: Type.Object({
    page_count: Type.Optional(Type.Integer()),
    pages: Type.Array(Type.Object({ page: Type.Integer(), spans: Type.Array(Type.Object({})) })),
    fields: Type.Array(Type.Object({ name: Type.String(), type: Type.String() })),
  }),
  PreviewRequest: PreviewBody,
  Limits: LimitsResponse,
  Usage: UsageResponse,
  FileReservation,
  Fonts: FontsResponse,
  CheckoutRequest: Type.Union([
    Type.Object(
      { plan: Type.Union(['starter', 'growth', 'scale'].map((p) => Type.Literal(p))) },
      { additionalProperties: false },
    ),
    Type.Object(
      { pack: Type.Union([Type.Literal('try_it'), Type.Literal('large')]) },
      { additionalProperties: false },
    ),
  ]),
  CheckoutResult: Type.Object({ url: Type.String(), expires_at: Iso }),
  Health: Type.Object({ status: Type.Literal('ok') }),
  Ack: Type.Object({}, { description: 'Acknowledgement (open object).' }),
};

const int = { type: 'integer' } as const;
export const headers = {
  'X-Request-Id': {
    description: 'Identifier of this request; quote it in reports.',
    schema: { type: 'string' },
  },
  'X-RateLimit-Limit': { description: "Requests per minute of the key's plan.", schema: int },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: int },
  'X-RateLimit-Reset': { description: 'Unix time (seconds) at which the window refills.', schema: int },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: int },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored response of an earlier request with the same key.',
    schema: { type: 'string', enum: ['true'] },
  },
};

export const parameters = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Same key + same body replays the first result (no second charge); same key + other body is 400; ' +
      'a duplicate while the first runs waits, then 409. Without it a key is derived from the content. ' +
      'Scoped to account and key mode; kept 24 hours.',
    schema: { type: 'string', minLength: 1, maxLength: MAX_KEY_LENGTH },
  },
  FileId: { name: 'file_id', in: 'path', required: true, schema: { type: 'string' } },
  JobId: { name: 'job_id', in: 'path', required: true, schema: { type: 'string' } },
  Token: {
    name: 'token',
    in: 'query',
    required: true,
    description: 'Signed token of the link returned by the API.',
    schema: { type: 'string' },
  },
};

const requestIdHeader = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
export const rlHeaders = {
  ...requestIdHeader,
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
};

/** One response per HTTP status of the error list; the description names the codes. */
export function errorResponses(): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const [code, status] of Object.entries(ERROR_STATUS) as [ErrorCode, number][]) {
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, unknown> = {};
  for (const [status, codes] of byStatus) {
    const extra =
      status === 429
        ? { ...rlHeaders, 'Retry-After': { $ref: '#/components/headers/Retry-After' } }
        : status === 409
          ? { ...requestIdHeader, 'Retry-After': { $ref: '#/components/headers/Retry-After' } }
          : requestIdHeader;
    out[`E${status}`] = {
      description: `Error: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
      headers: extra,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return out;
}

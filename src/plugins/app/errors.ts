import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../kernel/api-error.js';

/** Turns a Fastify/ajv validation error into a sentence that names the member at fault. */
function describeValidation(err: FastifyError): string {
  const first = err.validation?.[0];
  if (!first) return err.message;
  const where = `${err.validationContext ?? 'body'}${first.instancePath ? first.instancePath.replaceAll('/', '.') : ''}`;
  const params = first.params as Record<string, unknown>;
  if (first.keyword === 'additionalProperties') {
    return `Unknown member "${String(params.additionalProperty)}" in ${where}.`;
  }
  if (first.keyword === 'required') return `Missing member "${String(params.missingProperty)}" in ${where}.`;
  return `${where} ${first.message ?? 'is invalid'}.`;
}

/** PostgreSQL's SQLSTATEs of a server going away or not yet up: admin_shutdown,
 * crash_shutdown, cannot_connect_now; and class 08, connection exceptions. */
const PG_DOWN_STATES = new Set(['57P01', '57P02', '57P03']);
/** Socket errors of a connection that cannot be made or was cut. */
const SOCKET_DOWN_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/** node-postgres and pg-pool messages of a connection lost or never made (they carry no code). */
const PG_DOWN_MESSAGES = [
  /^Connection terminated/i, // "Connection terminated unexpectedly", "… due to connection timeout"
  /^timeout exceeded when trying to connect/i, // pg-pool's connectionTimeoutMillis
  /^Client has encountered a connection error and is not queryable/i,
  /^Cannot use a pool after calling end/i,
];

/**
 * True when `err` (or an error it wraps: `cause`, an AggregateError's `errors`, as a
 * connection to a host of several addresses fails) says PostgreSQL cannot be reached: its
 * SQLSTATEs and node-postgres's messages, or a socket error on the database's port
 * `dbPort` (so a blob store or Redis that is down is not called the database). Typed
 * errors (a refused source URL, an unreachable webhook) never come here: they are
 * ApiErrors already.
 */
export function isDatabaseDown(err: unknown, dbPort: number | undefined, depth = 0): boolean {
  if (depth > 4 || typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown; port?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (PG_DOWN_STATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  if (SOCKET_DOWN_CODES.has(code) && dbPort !== undefined && e.port === dbPort) return true;
  if (typeof e.message === 'string' && PG_DOWN_MESSAGES.some((m) => m.test(e.message as string))) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isDatabaseDown(x, dbPort, depth + 1))) return true;
  return isDatabaseDown(e.cause, dbPort, depth + 1);
}

/** The port of a `postgres://` DATABASE_URL (5432 when it names none); none for SQLite. */
export function databasePort(databaseUrl: string): number | undefined {
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) return undefined;
  try {
    return Number(new URL(databaseUrl).port || 5432);
  } catch {
    return undefined;
  }
}

/** Maps every error to the closed list of SPEC.md; 5xx details never reach the client. */
export function toApiError(err: unknown, dbPort?: number): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as FastifyError & { statusCode?: number };
  if (e?.validation) return new ApiError('invalid_request', describeValidation(e));
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return new ApiError('too_large', 'The request body is larger than allowed.');
    // Counts of multipart parts are the form's shape, not its size: a malformed request.
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return new ApiError('invalid_request', 'The multipart form has more parts than this operation takes.');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new ApiError('invalid_request', 'The body is not multipart/form-data.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('invalid_request', 'Unsupported Content-Type for this operation.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_request', 'The JSON body is empty.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_request', 'The body is not valid JSON.');
  }
  if (e instanceof SyntaxError || e?.statusCode === 400) {
    return new ApiError('invalid_request', 'The request could not be read: malformed body or parameters.');
  }
  if (e?.statusCode === 413) return new ApiError('too_large', 'The request body is larger than allowed.');
  if (e?.statusCode === 404) return new ApiError('not_found', 'No such resource.');
  if (isDatabaseDown(err, dbPort)) {
    // Still engine_error (the closed list has no other 5xx for it), but saying what it is.
    return new ApiError('engine_error', 'The database is not answering (restarting or unreachable).', {
      hint: 'This is temporary: retry the request in a few seconds. Work already accepted (jobs, batches) is kept and resumes when the database is back.',
      cause: err,
    });
  }
  return new ApiError('engine_error', 'Internal error.', { cause: err });
}

export default fp(
  async function errors(fastify: FastifyInstance) {
    const dbPort = databasePort(fastify.config.databaseUrl);
    fastify.setErrorHandler((err, request, reply) => {
      const apiError = toApiError(err, dbPort);
      if (apiError.status >= 500) request.log.error({ err }, 'request failed');
      else request.log.info({ code: apiError.code, msg: apiError.message }, 'request refused');
      if (apiError.headers) reply.headers(apiError.headers);
      reply.code(apiError.status).type('application/json; charset=utf-8').send(apiError.toBody());
    });
    fastify.setNotFoundHandler((request, reply) => {
      const apiError = new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`);
      reply.code(404).send(apiError.toBody());
    });
  },
  { name: 'errors' },
);

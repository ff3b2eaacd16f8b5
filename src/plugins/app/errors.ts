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

/** Maps every error to the closed list of SPEC.md; 5xx details never reach the client. */
export function toApiError(err: unknown): ApiError {
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
  return new ApiError('engine_error', 'Internal error.', { cause: err });
}

export default fp(
  async function errors(fastify: FastifyInstance) {
    fastify.setErrorHandler((err, request, reply) => {
      const apiError = toApiError(err);
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

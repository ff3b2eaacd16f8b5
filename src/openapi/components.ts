import { MAX_KEY_LENGTH } from '../domain/idempotency.js';
import { ERROR_STATUS, type ErrorCode } from '../kernel/error-codes.js';

/**
 * The parts of the OpenAPI document that are not schemas: response headers, the
 * Idempotency-Key parameter and one error response per HTTP status of the closed code list.
 * The schemas themselves come from the routes (src/schemas/, through @fastify/swagger).
 */

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

/** The header a route declares (lower case, as Fastify validates headers) for the shared parameter. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

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
};

const requestIdHeader = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
const rlHeaders = {
  ...requestIdHeader,
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
};

/** Headers of a success answer: every answer has X-Request-Id, rate-limited ones the X-RateLimit-* too. */
export function successHeaders(rateLimited: boolean): Record<string, unknown> {
  return rateLimited ? rlHeaders : requestIdHeader;
}

/** One response per HTTP status of the error list (`E400`…); the description names the codes. */
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

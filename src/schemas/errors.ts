import { Type } from '@sinclair/typebox';
import { ERROR_STATUS, type ErrorCode } from '../kernel/error-codes.js';
import { ref } from './ref.js';

/** The envelope of every error (SPEC "Errors"), with the closed list of codes. */
export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.Union(
          (Object.keys(ERROR_STATUS) as ErrorCode[]).map((c) => Type.Literal(c)),
          { description: 'Closed list: switch on it.' },
        ),
        message: Type.String(),
        hint: Type.String(),
      },
      { additionalProperties: false },
    ),
  },
  {
    $id: 'Error',
    // Open: some codes add members beside `error`, and the serializer must keep them.
    additionalProperties: true,
    description: 'Every error. Some codes add members beside `error` (edit_failed: `failed`, `unmatched`).',
    examples: [
      {
        error: {
          code: 'invalid_request',
          message: 'Unknown member "find_text" in body.edits.0.',
          hint: 'Fix the request as the message says; see /openapi.json for the exact shape.',
        },
      },
    ],
  },
);

export type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode];

/**
 * The error answers of a route, for its `schema.response`: `...errorResponses(400, 401, 429)`.
 * Fastify then serializes those answers through the envelope, and the OpenAPI document
 * points each status at `#/components/responses/E<status>` (which lists its codes).
 */
export function errorResponses(...statuses: ErrorStatus[]): Record<number, ReturnType<typeof ref>> {
  return Object.fromEntries(statuses.map((s) => [s, ref(ErrorEnvelope)]));
}

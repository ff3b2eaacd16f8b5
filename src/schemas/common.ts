import { Type } from '@sinclair/typebox';

/** `source`: where the document comes from (SPEC "Source", API-DECISIONS "Source"). */
export const Source = Type.Object(
  {
    file_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  {
    additionalProperties: false,
    description: 'One of file_id or url, plus the open password if any.',
    examples: [{ file_id: 'file_4Jq8x2' }],
  },
);

/** `[x0, y0, x1, y1]` in PDF points, origin top-left of the displayed page. */
export const Box = Type.Tuple([Type.Number(), Type.Number(), Type.Number(), Type.Number()]);

/** Pages: an array of 1-based numbers, or a string such as "1-3,7". */
export const PageRange = Type.Union([
  Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1, maxItems: 10_000 }),
  Type.String({ minLength: 1, maxLength: 1000 }),
]);

export const Iso = Type.String({
  format: 'date-time',
  description: 'ISO 8601 UTC, e.g. 2026-11-22T10:00:00Z.',
});

/** A signed download link (of an output or a preview). */
export const Link = Type.Object(
  { file_id: Type.Optional(Type.String()), url: Type.String(), expires_at: Iso },
  { description: 'Signed link, valid 24 hours.', additionalProperties: true },
);

/**
 * A body of raw bytes (uploads, downloads, previews, the source archive). In the document
 * a string of bytes; in the handler a Buffer or a stream (never serialized as JSON).
 */
export const Binary = Type.Unsafe<Uint8Array | NodeJS.ReadableStream>(
  Type.String({ contentMediaType: 'application/octet-stream' }),
);

/**
 * The Idempotency-Key request header (lower case: Fastify validates headers so); the
 * OpenAPI document shows it as the shared `IdempotencyKey` parameter. Its length is checked
 * by the idempotency layer, which answers with a precise message.
 */
export const IdempotencyHeaders = Type.Object({ 'idempotency-key': Type.Optional(Type.String()) });

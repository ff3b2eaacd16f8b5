import { Type } from '@sinclair/typebox';

/** `source`: where the document comes from (SPEC "Source", API-DECISIONS "Source"). */
export const Source = Type.Object(
  {
    file_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false, description: 'One of file_id or url, plus the open password if any.' },
);

/** `[x0, y0, x1, y1]` in PDF points, origin top-left of the displayed page. */
export const Box = Type.Tuple([Type.Number(), Type.Number(), Type.Number(), Type.Number()]);

/** Pages: an array of 1-based numbers, or a string such as "1-3,7". */
export const PageRange = Type.Union([
  Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1, maxItems: 10_000 }),
  Type.String({ minLength: 1, maxLength: 1000 }),
]);

import { type Static, Type } from '@sinclair/typebox';
import { Box, Source } from './common.js';

/** POST /v1/preview. */
export const PreviewBody = Type.Object(
  {
    source: Source,
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
    region: Type.Optional(Box),
    highlights: Type.Optional(Type.Array(Box, { maxItems: 500 })),
    width: Type.Optional(Type.Integer({ minimum: 16, maximum: 2000, default: 1000 })),
  },
  {
    $id: 'PreviewRequest',
    additionalProperties: false,
    examples: [{ source: { file_id: 'file_4Jq8x2' }, page: 1, region: [72, 90, 300, 140], width: 800 }],
  },
);
export type PreviewBody = Static<typeof PreviewBody>;

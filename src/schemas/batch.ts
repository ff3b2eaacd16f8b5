import { type Static, Type } from '@sinclair/typebox';
import { Source } from './common.js';
import { EditOptions, Edits } from './edit.js';

/** Values of one record: the placeholders' names to their values. */
export const RecordValues = Type.Record(
  Type.String({ minLength: 1, maxLength: 200 }),
  Type.Union([Type.String({ maxLength: 10_000 }), Type.Number(), Type.Boolean(), Type.Null()]),
);

/** `POST /v1/batch` (API-DECISIONS "Endpoint bodies"). */
export const BatchBody = Type.Object(
  {
    template: Source,
    edits: Edits,
    records: Type.Optional(Type.Array(RecordValues, { maxItems: 50_000 })),
    records_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description: 'CSV with a header row naming the placeholders; one record per further row.',
      }),
    ),
    options: Type.Optional(EditOptions),
  },
  {
    $id: 'BatchRequest',
    additionalProperties: false,
    examples: [
      {
        template: { file_id: 'file_4Jq8x2' },
        edits: [{ find: 'Dear Customer', replace: 'Dear {name}' }],
        records: [{ name: 'Ada' }, { name: 'Grace' }],
      },
    ],
    description:
      'One of records or records_url. `{name}` in find, replace, text and form values is replaced per record.',
  },
);
export type BatchBody = Static<typeof BatchBody>;

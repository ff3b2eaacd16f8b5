import { type Static, Type } from '@sinclair/typebox';
import { Box, PageRange, Source } from './common.js';

/** `scope` of an edit (API-DECISIONS "Edit object"). */
export const Scope = Type.Object(
  {
    pages: Type.Optional(PageRange),
    region: Type.Optional(
      Type.Object({ page: Type.Integer({ minimum: 1 }), box: Box }, { additionalProperties: false }),
    ),
    anchor: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    occurrence: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1 }), Type.Literal('first'), Type.Literal('last')]),
    ),
    span_ids: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 10_000 }),
    ),
  },
  { additionalProperties: false },
);

export const Style = Type.Object(
  {
    font: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    size: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1000 })),
    color: Type.Optional(Type.String({ pattern: '^#[0-9A-Fa-f]{6}$' })),
  },
  { additionalProperties: false },
);

export const At = Type.Union([
  Type.Object(
    { page: Type.Integer({ minimum: 1 }), x: Type.Number(), y: Type.Number() },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      after: Type.String({ minLength: 1, maxLength: 1000 }),
      newline: Type.Optional(Type.Boolean()),
      page: Type.Optional(Type.Integer({ minimum: 1 })),
    },
    { additionalProperties: false },
  ),
]);

export const OPS = ['replace', 'delete', 'redact', 'insert', 'form'] as const;
export type EditOp = (typeof OPS)[number];

export const Edit = Type.Object(
  {
    op: Type.Optional(Type.Union(OPS.map((op) => Type.Literal(op)))),
    find: Type.Optional(Type.String({ minLength: 1, maxLength: 10_000 })),
    replace: Type.Optional(Type.String({ maxLength: 10_000 })),
    match: Type.Optional(
      Type.Union([Type.Literal('exact'), Type.Literal('icase'), Type.Literal('word'), Type.Literal('regex')]),
    ),
    scope: Type.Optional(Scope),
    fit: Type.Optional(
      Type.Union([
        Type.Literal('auto'),
        Type.Literal('none'),
        Type.Literal('shrink'),
        Type.Literal('reflow'),
      ]),
    ),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 10_000 })),
    at: Type.Optional(At),
    fields: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1, maxLength: 1000 }),
        Type.Union([
          Type.String({ maxLength: 10_000 }),
          Type.Number(),
          Type.Boolean(),
          Type.Array(Type.String({ maxLength: 10_000 }), { maxItems: 1000 }),
        ]),
        { minProperties: 1, maxProperties: 10_000 },
      ),
    ),
    flatten: Type.Optional(Type.Boolean()),
    style: Type.Optional(Style),
  },
  { additionalProperties: false },
);
export type Edit = Static<typeof Edit>;

export const Edits = Type.Array(Edit, { minItems: 1, maxItems: 500 });

export const EditOptions = Type.Object(
  {
    async: Type.Optional(Type.Boolean()),
    webhook_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    watermark: Type.Optional(
      Type.Union([Type.Literal('auto'), Type.Literal('on'), Type.Literal('off')], {
        description:
          "The 'Edited' mark (SPEC rule 12). auto (default): edited pages of a flagged document (see flags in the result) are marked, an ordinary document never is; on: always marked; off: never marked, which on a flagged document needs a Growth or Scale account that accepted the document-integrity terms (else 403 forbidden_watermark_off). A redaction is never marked.",
      }),
    ),
    break_signature: Type.Optional(
      Type.Boolean({
        description:
          'true: edit a digitally signed document (otherwise 422 signed_document). Replace, delete, insert and form edits are appended as an incremental update, so each signature still verifies for the revision it signed (warning docmdp_violation when a certification signature forbids the change); a redaction rewrites the whole file and removes the signatures (warning signature_removed).',
      }),
    ),
    dry_run: Type.Optional(
      Type.Boolean({
        description:
          "true: the edit is planned and verified as usual but nothing is saved or billed: the result says what would change (changes with pages, boxes, font decisions and verdicts; failed; unmatched; flags and warnings) with output null, no previews and usage.pages_billed 0. Answers synchronously (not with async or webhook_url, nor in a batch); the quota check is the real edit's.",
      }),
    ),
    ocr: Type.Optional(
      Type.Boolean({
        description:
          'true: text on scanned pages (no text layer, or only an invisible layer that does not sit on the image) is found by OCR first (Tesseract, 300 dpi, deskewed); replace and delete there are drawn as pixels into the page image (font_source "raster"), verified by rendering and read back by OCR (else failed[] ocr_readback_mismatch); a redaction of a scanned word is refused (scanned_text). A touched page read by OCR is billed five pages. Pages with text are never OCR\'d.',
      }),
    ),
    ocr_languages: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 16, pattern: '^[A-Za-z_]+$' }), {
        minItems: 1,
        maxItems: 8,
        description:
          'Tesseract language codes for OCR (default ["eng"]); needs ocr true; a language that is not installed answers 400.',
      }),
    ),
    ocr_text_layer: Type.Optional(
      Type.Boolean({
        description:
          'With ocr true: pages read by OCR get an invisible text layer of their words in the output, so the edited scan is searchable.',
      }),
    ),
    font: Type.Optional(
      Type.Object(
        { policy: Type.Optional(Type.Union([Type.Literal('prefer_exact'), Type.Literal('metric_only')])) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type EditOptions = Static<typeof EditOptions>;

export const EditBody = Type.Object(
  { source: Source, edits: Edits, options: Type.Optional(EditOptions) },
  {
    $id: 'EditRequest',
    additionalProperties: false,
    description:
      'JSON form of POST /v1/edit. The multipart form carries the same `edits` and `options` as JSON text.',
    examples: [
      {
        source: { file_id: 'file_4Jq8x2' },
        edits: [{ find: 'Amount Due', replace: 'Amount Owed' }],
        options: { async: false },
      },
    ],
  },
);
export type EditBody = Static<typeof EditBody>;

import { type Static, Type } from '@sinclair/typebox';
import { PageRange, Source } from './common.js';
import { OPEN } from './ref.js';

/** POST /v1/text. */
export const TextBody = Type.Object(
  {
    source: Source,
    pages: Type.Optional(PageRange),
    layers: Type.Optional(
      Type.Array(Type.Union([Type.Literal('text'), Type.Literal('forms')]), {
        minItems: 1,
        uniqueItems: true,
      }),
    ),
    ocr: Type.Optional(
      Type.Boolean({
        description:
          'true: scanned pages are read by OCR (Tesseract, 300 dpi, deskewed); their spans have source "ocr" and a confidence. Pages with visible text are never OCR\'d. Free, rate-limited like an edit.',
      }),
    ),
    ocr_languages: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 16, pattern: '^[A-Za-z_]+$' }), {
        minItems: 1,
        maxItems: 8,
        description:
          'Tesseract language codes for OCR (default ["eng"]); a language that is not installed answers 400.',
      }),
    ),
  },
  {
    $id: 'TextRequest',
    additionalProperties: false,
    examples: [{ source: { file_id: 'file_4Jq8x2' }, pages: '1-2', layers: ['text'] }],
  },
);
export type TextBody = Static<typeof TextBody>;

const Span = Type.Object(
  {
    span_id: Type.String({ description: 'Stable span id; `scope.span_ids` takes it.' }),
    page: Type.Integer({ description: '1-based page.' }),
    text: Type.String(),
    box: Type.Array(Type.Number(), { description: '[x0, y0, x1, y1], points, top-left origin.' }),
    font: Type.String({ description: 'Font name without subset tag.' }),
    size: Type.Number({ description: 'Font size in points.' }),
    color: Type.String({ description: '#rrggbb.' }),
    flags: Type.Array(Type.String(), { description: 'bold, italic, monospace, serif.' }),
    line: Type.Integer({ description: 'Line id, unique within the page.' }),
    block: Type.Integer({ description: 'Block id, unique within the page.' }),
    rotation: Type.Number({ description: 'Baseline angle, degrees counter-clockwise as displayed.' }),
    source: Type.String({
      description:
        'text-layer (page content), annotation (drawn by an annotation appearance), form-field (drawn by a form widget: a filled value) or ocr (a scanned page).',
    }),
    space_before: Type.Boolean({
      description: 'A word space separates this span from the previous span of the same line.',
    }),
    confidence: Type.Optional(
      Type.Number({ description: "ocr spans: the recogniser's confidence in the word, 0 to 100." }),
    ),
  },
  { ...OPEN, description: 'One text span, in reading order.' },
);

const FormField = Type.Object(
  {
    name: Type.String({ description: 'Fully qualified name.' }),
    type: Type.String({ description: 'text, checkbox, radio, combo, list, signature or button.' }),
    value: Type.Union([Type.String(), Type.Boolean(), Type.Array(Type.String()), Type.Null()], {
      description:
        'text/combo: string; checkbox: checked; radio: export value or null; list: selection; signature: signed; button: null.',
    }),
    options: Type.Optional(
      Type.Array(Type.String(), { description: 'Choices of combo and list boxes, export values of radios.' }),
    ),
    page: Type.Integer({ description: '1-based page of the first widget.' }),
    box: Type.Array(Type.Number(), { description: 'Box of the first widget.' }),
    read_only: Type.Boolean({
      description: 'A viewer does not let the user change the value (/Ff ReadOnly).',
    }),
    required: Type.Boolean({
      description: 'The value must be set when the form is submitted (/Ff Required).',
    }),
    multiline: Type.Boolean({ description: 'Text fields: the value may hold line breaks (/Ff Multiline).' }),
    comb: Type.Boolean({ description: 'Text fields: one character per cell, `max_len` cells (/Ff Comb).' }),
    max_len: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'Text fields: the most characters the value may hold (/MaxLen); null when unset.',
    }),
  },
  { ...OPEN, description: 'One AcroForm field.' },
);

/** The answer of POST /v1/text: the spans of each page and the form fields. */
export const TextResult = Type.Object(
  {
    page_count: Type.Integer(),
    pages: Type.Array(
      Type.Object(
        {
          page: Type.Integer({ description: '1-based page.' }),
          width: Type.Number({ description: 'Displayed width in points.' }),
          height: Type.Number({ description: 'Displayed height in points.' }),
          rotation: Type.Integer({ description: 'Clockwise display rotation.' }),
          spans: Type.Array(Span),
          text: Type.String({ description: 'The page as plain text in reading order.' }),
        },
        OPEN,
      ),
      { description: 'Empty when `layers` leaves out text.' },
    ),
    fields: Type.Array(FormField, { description: 'Empty when `layers` leaves out forms.' }),
  },
  { $id: 'TextResult', ...OPEN },
);

import { Type } from '@sinclair/typebox';
import { Box, Link } from './common.js';
import { OPEN, ref } from './ref.js';

/** One applied edit of an edit result. */
export const Change = Type.Object(
  {
    page: Type.Integer(),
    op: Type.String({ description: 'replace, delete, redact, insert or form.' }),
    edit_index: Type.Optional(Type.Integer({ description: 'Position of the edit in the request.' })),
    find: Type.Optional(Type.String()),
    replace: Type.Optional(Type.String()),
    font_source: Type.Optional(
      Type.String({
        description:
          'exact-embedded, exact-declared, metric-twin, look-alike, raster or none; for a font picked with style.font, its kind in GET /v1/fonts.',
      }),
    ),
    font_used: Type.Optional(Type.String()),
    verified: Type.Optional(Type.Boolean()),
    collateral_pixels: Type.Optional(Type.Integer()),
    box: Type.Optional(Box),
    before_preview_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    after_preview_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    text: Type.Optional(Type.String({ description: 'insert: the text added.' })),
    alignment: Type.Optional(
      Type.Union(
        [Type.Literal('left'), Type.Literal('centre'), Type.Literal('right'), Type.Literal('justified')],
        {
          description:
            "replace: the line's alignment, read from its block, its neighbours and the page, and kept when the new text changes the line's width (a centred line stays centred, a right-aligned one flush right, a justified one spreads the change over its word gaps). Absent when the line was not aligned (vertical text, fit none, a line drawn in parts that cannot be moved).",
        },
      ),
    ),
    field: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description:
          'form: the fully qualified field name; replace or delete: the filled field whose value held the text.',
      }),
    ),
    value: Type.Optional(
      Type.Union([Type.String(), Type.Boolean(), Type.Array(Type.String()), Type.Null()], {
        description:
          'form: the value as read back from the output (checkbox: boolean; radio: the export value; multi-select list: array).',
      }),
    ),
  },
  {
    $id: 'Change',
    ...OPEN,
    description:
      'One applied edit (form: one entry per field that landed; font_source "none" for checkboxes and radios).',
  },
);

/** An edit that matched nothing. */
export const Unmatched = Type.Object(
  { index: Type.Integer(), op: Type.String(), find: Type.Optional(Type.String()) },
  { ...OPEN, description: 'An edit that matched nothing.' },
);

/** An edit found but not applied (rolled back or refused), with its stable reason. */
export const Failed = Type.Object(
  {
    index: Type.Integer(),
    op: Type.String(),
    reason: Type.String({
      description:
        "One of: collateral_change, overflow (also: a reflowed paragraph needs more room than is blank below it), missing_glyphs, no_metric_font, reflow_unsupported (fit: reflow on a paragraph that is not simple: several fonts, sizes or colours, not horizontal, inside a form XObject, hyphenated line ends; or with a style override), unsupported_layout, image_unsupported, scanned_text, ocr_readback_mismatch (a word drawn into a scanned page is not read back by OCR as the new text), annotation_text, field_not_found, field_ambiguous, value_not_accepted, readback_mismatch, type3_font (text in a Type 3 font needs a glyph the font does not draw), anchor_not_found, page_not_found and no_text_style (insert), encryption_unsupported (the document's encryption cannot be written again), engine_error (an internal failure while planning this edit).",
    }),
    message: Type.String(),
    field: Type.Optional(Type.String()),
  },
  { ...OPEN, description: 'An edit found but not applied.' },
);

const Place = {
  index: Type.Integer({ description: 'The redact edit.' }),
  kind: Type.String(),
  page: Type.Union([Type.Integer(), Type.Null()]),
  where: Type.String(),
};

const Timings = Type.Object(
  {
    parse_ms: Type.Number({ description: 'Opening the document and reading page content.' }),
    edit_ms: Type.Number({ description: 'Finding matches, planning and writing new content.' }),
    render_ms: Type.Number({ description: 'Rendering pages before and after each edit.' }),
    diff_ms: Type.Number({ description: 'Pixel comparison and preview crops.' }),
    save_ms: Type.Number({ description: 'Writing (and re-encrypting) the document.' }),
    mark_ms: Type.Number({ description: 'Adding the SAMPLE mark (0 without one).' }),
    total_ms: Type.Number({ description: 'The whole engine call.' }),
  },
  {
    ...OPEN,
    description:
      'Server-side time of the engine call per stage, in milliseconds (informational; not a stable performance promise).',
  },
);

/** One flag of SPEC rule 12 and the evidence for it. */
export const Flag = Type.Object(
  {
    kind: Type.String({
      description: 'bank_statement, identity_document, signed_contract, invoice or sealed_paper.',
    }),
    evidence: Type.String({
      description:
        'What in the document shows it: pages and lines, signature dictionaries, stamp annotations.',
    }),
  },
  OPEN,
);

/** `flags` of an edit result. */
export const Flags = Type.Array(Flag, {
  description:
    "What the engine classified the document as (SPEC rule 12), each with its evidence; empty for an ordinary document. A flagged document's edited pages get the 'Edited' mark unless options.watermark is off (warning edited_mark).",
});

/** The members an edit result shares with a finished job and a batch record. */
export const resultFields = {
  changes: Type.Array(ref(Change)),
  unmatched: Type.Array(Unmatched),
  failed: Type.Array(Failed, { description: 'Edits found but not applied, each with a stable reason.' }),
  warnings: Type.Array(Type.Any(), {
    description:
      'Stable warning codes (sample_mark, edited_mark, edited_mark_overlaps, approx_font_used, docmdp_violation, signature_removed, …).',
  }),
  flatten_skipped: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'Form flatten: the fields left live because their value has no appearance to draw (the warning flatten_skipped names them here).',
    }),
  ),
  removed: Type.Optional(
    Type.Array(Type.Object(Place, OPEN), {
      description:
        'Redaction: each place outside the page text the string was removed from (image pixels, annotation, form_field, metadata, xmp, outline, structure, page_label, embedded_file, javascript, xfa).',
    }),
  ),
  residual: Type.Optional(
    Type.Array(Type.Object({ ...Place, text: Type.String() }, OPEN), {
      description:
        'Redaction: every place in the saved output where the string still occurs (page_text, stream, …). Empty when the redaction is complete.',
    }),
  ),
  output: Type.Union([Link, Type.Null()], { description: 'The edited PDF (null when nothing changed).' }),
};

export const EditStatus = Type.Union(
  [Type.Literal('done'), Type.Literal('partial'), Type.Literal('failed')],
  {
    description: 'done: every edit applied; partial: some; failed: none.',
  },
);

/** 200 of POST /v1/edit (SPEC "Edit result"). */
export const EditResult = Type.Object(
  {
    status: EditStatus,
    ...resultFields,
    flags: Flags,
    dry_run: Type.Optional(
      Type.Boolean({
        description: 'Present (true) when options.dry_run asked for a plan only: nothing saved or billed.',
      }),
    ),
    usage: Type.Object(
      {
        pages_billed: Type.Integer(),
        remaining: Type.Union([Type.Integer(), Type.Null()], {
          description: 'Pages left this period (null: Starter overage, never refused).',
        }),
      },
      OPEN,
    ),
    timings: Type.Optional(Timings),
  },
  {
    $id: 'EditResult',
    ...OPEN,
    description: 'Result of an edit (200 of POST /v1/edit, and the body of a finished job).',
  },
);

/** 202: the work continues as a job. */
export const Queued = Type.Object(
  { job_id: Type.String() },
  {
    $id: 'Queued',
    ...OPEN,
    description: 'The work continues as a job.',
    examples: [{ job_id: 'job_7Hk2mQ' }],
  },
);

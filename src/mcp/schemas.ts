import { z } from 'zod';

/** Input and output schemas of the MCP tools (zod, as the SDK takes them). */

export function documentSchema(local: boolean, what = 'The PDF') {
  return z
    .object({
      url: z
        .string()
        .min(1)
        .max(4096)
        .optional()
        .describe('Public http(s) address the service fetches the PDF from.'),
      file_id: z
        .string()
        .min(1)
        .max(100)
        .optional()
        .describe('file_… id of a PDF already uploaded (POST /v1/files) or an output of an earlier edit.'),
      ...(local
        ? {
            path: z
              .string()
              .min(1)
              .max(4096)
              .optional()
              .describe(
                'Local PDF file, relative to (or absolute inside) the folder this server may read; it is uploaded first.',
              ),
          }
        : {}),
      password: z.string().max(1024).optional().describe('Open password of an encrypted PDF.'),
    })
    .strict()
    .describe(
      `${what}: exactly one of ${local ? 'url, file_id or path' : 'url or file_id'}, plus its password if it has one.`,
    );
}

export const Box = z
  .tuple([z.number(), z.number(), z.number(), z.number()])
  .describe('[x0, y0, x1, y1] in PDF points, origin top-left of the displayed page.');

export const Pages = z
  .union([z.array(z.number().int().min(1)).min(1).max(10_000), z.string().min(1).max(1000)])
  .describe('1-based pages: an array such as [1, 3] or a string such as "1-3,7".');

const MODES = ['exact', 'icase', 'word', 'regex'] as const;
const MODES_TEXT = 'exact: as written; icase: ignoring case; word: whole words only (case as written)';

/** pdf_find runs the pattern itself (JavaScript). */
export const MatchMode = z.enum(MODES).describe(`${MODES_TEXT}; regex: a JavaScript regular expression.`);

/** An edit's `match` is applied by the engine (Rust regex syntax). */
export const EditMatchMode = z
  .enum(MODES)
  .describe(
    `${MODES_TEXT}; regex: a regular expression in Rust regex syntax (no look-around, no back-references).`,
  );

const Scope = z
  .object({
    pages: Pages.optional(),
    region: z
      .object({ page: z.number().int().min(1), box: Box })
      .strict()
      .optional()
      .describe('Only matches inside this box of this page.'),
    anchor: z.string().min(1).max(1000).optional().describe('Only the match nearest after this phrase.'),
    occurrence: z
      .union([z.number().int().min(1), z.enum(['first', 'last'])])
      .optional()
      .describe('Only the nth match (1-based), or the first or last.'),
    span_ids: z
      .array(z.string().min(1).max(64))
      .min(1)
      .max(10_000)
      .optional()
      .describe('Only inside these spans (span_id values from pdf_find).'),
  })
  .strict()
  .describe('Limits where the edit applies; without it every match is edited.');

const Style = z
  .object({
    font: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('A font name of GET /v1/fonts (e.g. LiberationSans-Bold).'),
    size: z.number().positive().max(1000).optional().describe('Font size in points.'),
    color: z
      .string()
      .regex(/^#[0-9A-Fa-f]{6}$/)
      .optional()
      .describe('#rrggbb.'),
  })
  .strict()
  .describe('Overrides of the text style; by default new text takes the style of the text it replaces.');

const At = z
  .union([
    z
      .object({ page: z.number().int().min(1), x: z.number(), y: z.number() })
      .strict()
      .describe('A point: baseline start in points from the top-left of the page.'),
    z
      .object({
        after: z.string().min(1).max(1000).describe('Anchor phrase: the text goes right after it.'),
        newline: z.boolean().optional().describe('Start a new line below the anchor line instead.'),
        page: z.number().int().min(1).optional(),
      })
      .strict(),
  ])
  .describe('Where an insert goes.');

export const Edit = z
  .object({
    op: z
      .enum(['replace', 'delete', 'redact', 'insert', 'form'])
      .optional()
      .describe(
        'replace (default): find → replace; delete: remove the found text, closing the gap; redact: remove it for good (text, image pixels, metadata) and black it out; insert: add `text` at `at`; form: fill AcroForm `fields`.',
      ),
    find: z.string().min(1).max(10_000).optional().describe('Text to find (replace, delete, redact).'),
    replace: z.string().max(10_000).optional().describe('New text (replace).'),
    match: EditMatchMode.optional(),
    scope: Scope.optional(),
    fit: z
      .enum(['auto', 'none', 'shrink', 'reflow'])
      .optional()
      .describe(
        'Longer text: auto (default) fits it, shrink narrows it, reflow re-wraps the paragraph, none refuses.',
      ),
    text: z.string().min(1).max(10_000).optional().describe('Text to add (insert).'),
    at: At.optional(),
    fields: z
      .record(
        z.string().min(1).max(1000),
        z.union([z.string().max(10_000), z.number(), z.boolean(), z.array(z.string().max(10_000)).max(1000)]),
      )
      .optional()
      .describe(
        'form: field name → value (boolean for checkboxes, export value for radios, array for multi-select lists).',
      ),
    flatten: z.boolean().optional().describe('form: burn the values into the page.'),
    style: Style.optional(),
  })
  .strict()
  .describe('One edit.');

export const Edits = z
  .array(Edit)
  .min(1)
  .max(500)
  .describe('The edits, applied in order. Example: [{"find": "Amount Due", "replace": "Amount Owed"}].');

export const Options = z
  .object({
    async: z
      .boolean()
      .optional()
      .describe('Queue as a job and answer with job_id at once (then use pdf_job).'),
    webhook_url: z.string().min(1).max(2048).optional().describe('Receives the job result when it finishes.'),
    watermark: z
      .enum(['auto', 'on', 'off'])
      .optional()
      .describe('off needs Growth/Scale and accepted terms.'),
    break_signature: z
      .boolean()
      .optional()
      .describe(
        'Allow editing a digitally signed PDF: the edit is appended as an incremental update (each signature stays valid for its revision; docmdp_violation when a certification forbids it); a redaction removes the signatures.',
      ),
    dry_run: z
      .boolean()
      .optional()
      .describe(
        'pdf_edit only: plan and verify the edits but save and bill nothing; the result says what would change (changes with verdicts, failed, unmatched, flags) with no output.',
      ),
    ocr: z.boolean().optional().describe('Run OCR first on pages without a text layer.'),
    font: z
      .object({ policy: z.enum(['prefer_exact', 'metric_only']).optional() })
      .strict()
      .optional()
      .describe('metric_only refuses look-alike fonts.'),
  })
  .strict()
  .describe('Options of the edit.');

const Link = z.looseObject({ url: z.string(), expires_at: z.string(), file_id: z.string().optional() });

export const ChangeOut = z
  .looseObject({
    page: z.number().int(),
    op: z.string(),
    find: z.string().optional(),
    replace: z.string().optional(),
    verified: z
      .boolean()
      .optional()
      .describe('The render check passed: the page changed only where it should.'),
    font_source: z
      .string()
      .optional()
      .describe('exact-embedded, exact-declared, metric-twin, look-alike, raster or none.'),
    font_used: z.string().optional(),
    collateral_pixels: z.number().int().optional().describe('Pixels changed outside the edit (0 is clean).'),
    before_preview_url: z.string().nullable().optional(),
    after_preview_url: z.string().nullable().optional(),
  })
  .describe('One applied change.');

export const ResultOut = z.looseObject({
  status: z
    .enum(['done', 'partial', 'failed', 'queued'])
    .describe(
      'done: every edit applied and verified; partial: some; failed: none; queued: running as job_id.',
    ),
  job_id: z.string().optional().describe('Set when the edit runs as a job: poll it with pdf_job.'),
  changes: z.array(ChangeOut).optional(),
  unmatched: z
    .array(z.looseObject({ index: z.number().int(), op: z.string(), find: z.string().optional() }))
    .optional()
    .describe('Edits whose text was not found.'),
  failed: z
    .array(
      z.looseObject({ index: z.number().int(), op: z.string(), reason: z.string(), message: z.string() }),
    )
    .optional()
    .describe('Edits found but rolled back, with a stable reason.'),
  warnings: z.array(z.unknown()).optional(),
  output: Link.nullable()
    .optional()
    .describe('Signed link to the edited PDF (24 hours); null when nothing changed.'),
  usage: z.looseObject({ pages_billed: z.number().int(), remaining: z.number().int().nullable() }).optional(),
  saved_to: z.string().optional().describe('Local file the output was written to (output_path).'),
});

export const FindOut = {
  query: z.string(),
  match: MatchMode,
  page_count: z.number().int(),
  hit_count: z.number().int(),
  truncated: z.boolean().describe('More hits than max_hits exist.'),
  hits: z.array(
    z.object({
      page: z.number().int().describe('1-based page.'),
      text: z.string().describe('The matched text.'),
      box: Box.describe('Union of the boxes of the spans the hit touches.'),
      context: z.string().describe('The text around the hit.'),
      spans: z.array(
        z.object({
          span_id: z.string().describe('Pass in scope.span_ids of pdf_edit to edit exactly this place.'),
          text: z.string(),
          box: z.array(z.number()),
          font: z.string(),
          size: z.number(),
        }),
      ),
    }),
  ),
};

export const PreviewOut = {
  images: z.array(
    z.object({
      label: z.string().describe('page N, before or after.'),
      width: z.number().int(),
      height: z.number().int(),
      bytes: z.number().int(),
      saved_to: z.string().optional(),
    }),
  ),
};

export const BatchOut = {
  job_id: z.string(),
  status: z.string(),
  records: z.number().int().describe('Records sent.'),
};

export const JobOut = z.looseObject({
  job_id: z.string(),
  status: z.enum(['queued', 'running', 'done', 'partial', 'failed']),
  kind: z.enum(['edit', 'batch']),
  finished: z.boolean(),
  progress: z.looseObject({ done: z.number().int(), total: z.number().int() }),
  changes: z.array(ChangeOut).optional(),
  unmatched: z.array(z.unknown()).optional(),
  failed: z.array(z.unknown()).optional(),
  warnings: z.array(z.unknown()).optional(),
  output: Link.nullable().optional(),
  usage: z.looseObject({ pages_billed: z.number().int(), remaining: z.number().int().nullable() }).optional(),
  records: z.array(z.unknown().nullable()).optional(),
  error: z.looseObject({ code: z.string(), message: z.string(), hint: z.string() }).optional(),
  saved_to: z.array(z.string()).optional().describe('Local files written (output_path / output_dir).'),
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { parseCsvRecords } from '../domain/batch-csv.js';
import { ApiCallError, type PdfeditApi } from './api.js';
import { type DocumentRef, type LocalFiles, localInput, saveLocal, toSource } from './documents.js';
import { type FindHit, findInPages, type TextPage } from './find.js';
import {
  BatchOut,
  Box,
  documentSchema,
  Edits,
  FindOut,
  JobOut,
  MatchMode,
  Options,
  Pages,
  PreviewOut,
  ResultOut,
} from './schemas.js';

export const SERVER_NAME = 'pdfedit';
export const SERVER_VERSION = '0.1.0';

export interface McpOptions {
  api: PdfeditApi;
  /** Set in stdio mode: the folder `path`, `output_path` and `output_dir` may use. */
  local?: LocalFiles;
  /** Longest wait pdf_job allows (seconds). */
  maxWaitSeconds?: number;
}

const INSTRUCTIONS =
  'pdfedit edits the text inside existing PDFs in their own fonts and checks every change by rendering the page ' +
  'before and after. Typical flow: pdf_find the text (spans with span_id and box) → pdf_preview the page with the ' +
  "hit highlighted → pdf_edit (replace, delete, redact, insert, form) → read each change's `verified`, " +
  '`font_source` and `collateral_pixels` → pdf_preview the before/after of a change. Large documents and ' +
  'batches run as jobs: pdf_job waits for them.';

function pngSize(png: Buffer): { width: number; height: number } {
  if (png.length < 24 || png.toString('latin1', 12, 16) !== 'IHDR') return { width: 0, height: 0 };
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** An API error (or a refused input) as the tool error the agent reads: code, message and hint. */
export function toolError(err: unknown): CallToolResult {
  const e =
    err instanceof ApiCallError
      ? err
      : new ApiCallError(
          400,
          'invalid_request',
          err instanceof Error ? err.message : String(err),
          'Fix the arguments as the message says.',
        );
  const extra: Record<string, unknown> = {};
  for (const k of ['failed', 'unmatched'] as const) if (e.body[k] !== undefined) extra[k] = e.body[k];
  const error = { code: e.code, message: e.message, hint: e.hint, ...(e.status ? { status: e.status } : {}) };
  return {
    isError: true,
    content: [
      { type: 'text', text: `Error ${e.code}: ${e.message}\nHint: ${e.hint}` },
      { type: 'text', text: JSON.stringify({ error, ...extra }) },
    ],
    _meta: { 'pdfedit/error': { ...error, ...extra } },
  };
}

async function guarded(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (err) {
    return toolError(err);
  }
}

function changeLine(c: Record<string, unknown>): string {
  const what =
    c.op === 'replace' ? `"${c.find}" → "${c.replace}"` : c.find ? `"${c.find}"` : (c.text ?? c.field ?? '');
  return `p${c.page} ${c.op} ${what}: ${c.verified ? 'verified' : 'NOT verified'}, font ${c.font_source ?? '-'}, collateral ${c.collateral_pixels ?? 0} px`;
}

function resultSummary(r: Record<string, unknown>): string {
  const changes = (r.changes as Record<string, unknown>[] | undefined) ?? [];
  const failed = (r.failed as Record<string, unknown>[] | undefined) ?? [];
  const unmatched = (r.unmatched as Record<string, unknown>[] | undefined) ?? [];
  const lines = [
    `status ${r.status}: ${changes.length} change(s), ${failed.length} failed, ${unmatched.length} unmatched`,
  ];
  for (const c of changes.slice(0, 20)) lines.push(`  ${changeLine(c)}`);
  for (const f of failed) lines.push(`  failed #${f.index} ${f.op}: ${f.reason} (${f.message})`);
  for (const u of unmatched) lines.push(`  unmatched #${u.index} ${u.op}${u.find ? ` "${u.find}"` : ''}`);
  const output = r.output as { url?: string } | null | undefined;
  if (output?.url) lines.push(`output: ${output.url}`);
  if (r.dry_run === true) lines.push('dry run: nothing was saved or billed');
  if (r.saved_to) lines.push(`saved to ${r.saved_to}`);
  return lines.join('\n');
}

/** The edit result as the tool answers it (the members outputSchema names, plus the rest). */
function resultOf(body: Record<string, unknown>): Record<string, unknown> {
  const { timings: _t, ...rest } = body;
  return rest;
}

/** The MCP server with the five tools, over `api`. One instance per connection (stdio) or request (HTTP). */
export function createMcpServer(opts: McpOptions): McpServer {
  const { api, local } = opts;
  const maxWait = opts.maxWaitSeconds ?? 300;
  const server = new McpServer(
    { name: SERVER_NAME, version: SERVER_VERSION },
    { instructions: INSTRUCTIONS },
  );
  const doc = (what?: string) => documentSchema(local !== undefined, what);
  // Members only the local (stdio) server has; typed as always there (they are optional).
  const localOnly = <T extends Record<string, z.ZodOptional<z.ZodString>>>(shape: T): T =>
    (local ? shape : {}) as T;
  const outputPath = (what: string) =>
    localOnly({ output_path: z.string().min(1).max(4096).optional().describe(what) });

  server.registerTool(
    'pdf_find',
    {
      title: 'Find text in a PDF',
      description:
        'Finds a phrase or regular expression in the text of a PDF and returns every hit with its page, box, the spans ' +
        '(span_id, font, size) it covers and the text around it. Reading is free. Pass span_ids to pdf_edit ' +
        '(scope.span_ids) to edit exactly one hit. Example: {"document": {"url": "https://example.com/a.pdf"}, "query": "Invoice No"}.',
      inputSchema: z.strictObject({
        document: doc(),
        query: z
          .string()
          .min(1)
          .max(1000)
          .describe('The phrase (or regex) to find. Whitespace matches any line break.'),
        match: MatchMode.default('exact'),
        pages: Pages.optional(),
        max_hits: z
          .number()
          .int()
          .min(1)
          .max(1000)
          .default(50)
          .describe('At most this many hits are returned.'),
        context_chars: z
          .number()
          .int()
          .min(0)
          .max(400)
          .default(40)
          .describe('Characters of context on each side.'),
      }),
      outputSchema: FindOut,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const source = await toSource(api, args.document as DocumentRef, local);
        const { body } = await api.json<{ page_count: number; pages: TextPage[] }>('POST', '/v1/text', {
          source,
          ...(args.pages !== undefined ? { pages: args.pages } : {}),
          layers: ['text'],
        });
        let all: FindHit[];
        try {
          all = findInPages(body.pages, args.query, args.match, args.context_chars);
        } catch (err) {
          throw new ApiCallError(
            400,
            'invalid_request',
            (err as Error).message,
            'Fix the query or use match "exact".',
          );
        }
        const hits = all.slice(0, args.max_hits);
        const out = {
          query: args.query,
          match: args.match,
          page_count: body.page_count,
          hit_count: all.length,
          truncated: all.length > hits.length,
          hits,
        };
        const lines = [
          `${all.length} hit(s) of "${args.query}" (${args.match}) in ${body.page_count} page(s)`,
        ];
        for (const h of hits.slice(0, 10))
          lines.push(`  p${h.page} [${h.box.map((n) => n.toFixed(1)).join(', ')}] ${h.context}`);
        return { content: [{ type: 'text', text: lines.join('\n') }], structuredContent: out };
      }),
  );

  server.registerTool(
    'pdf_edit',
    {
      title: 'Edit a PDF',
      description:
        'Applies edits (replace, delete, redact, insert, form fill) to a PDF in its own fonts. Each change is checked ' +
        'by rendering: `verified` says the page changed only where it should, `collateral_pixels` how many pixels changed ' +
        'elsewhere, `font_source` which font drew the new text. Edits that were not found are in `unmatched`, edits ' +
        'rolled back in `failed` with a reason. The edited PDF is at `output.url` (24 hours); use its file_id as the ' +
        'document of a next call. Example: {"document": {"file_id": "file_4Jq8x2"}, "edits": [{"find": "Amount Due", ' +
        '"replace": "Amount Owed"}]}.',
      inputSchema: z.strictObject({
        document: doc(),
        edits: Edits,
        options: Options.optional(),
        ...outputPath('Local file to save the edited PDF to (inside the allowed folder).'),
      }),
      outputSchema: ResultOut,
      // Same request, same result: the API deduplicates by content (no second charge).
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    (args) =>
      guarded(async () => {
        const source = await toSource(api, args.document as DocumentRef, local);
        const { status, body } = await api.json('POST', '/v1/edit', {
          source,
          edits: args.edits,
          ...(args.options ? { options: args.options } : {}),
        });
        if (status === 202) {
          const out = { status: 'queued', job_id: String(body.job_id) };
          return {
            content: [
              {
                type: 'text',
                text: `queued as job ${out.job_id}: call pdf_job with wait_seconds to get the result`,
              },
            ],
            structuredContent: out,
          };
        }
        const out = resultOf(body);
        const target = args.output_path;
        if (target !== undefined) {
          const output = body.output as { url?: string } | null;
          if (output?.url) out.saved_to = saveLocal(local, target, await api.download(output.url));
        }
        return { content: [{ type: 'text', text: resultSummary(out) }], structuredContent: out };
      }),
  );

  server.registerTool(
    'pdf_preview',
    {
      title: 'Preview a PDF page or a change',
      description:
        'Renders a page (or a region of it) as PNG, optionally with boxes highlighted (e.g. the box of a pdf_find hit); ' +
        'or, given `change` (a change entry of pdf_edit with its before_preview_url and after_preview_url), the ' +
        'before and after images of that change. Free. Example: {"document": {"file_id": "file_4Jq8x2"}, "page": 1, ' +
        '"highlights": [[72, 90, 300, 104]]}.',
      inputSchema: z.strictObject({
        document: doc('The PDF to render (not with `change`)').optional(),
        page: z.number().int().min(1).default(1).describe('1-based page.'),
        region: Box.optional().describe('Render only this box of the page.'),
        highlights: z.array(Box).max(500).optional().describe('Boxes drawn over the page.'),
        width: z
          .number()
          .int()
          .min(16)
          .max(2000)
          .optional()
          .describe('Image width in pixels (default 1000).'),
        change: z
          .object({
            before_preview_url: z.string().nullable().optional(),
            after_preview_url: z.string().nullable().optional(),
          })
          .optional()
          .describe('A change entry of pdf_edit or pdf_job: its before/after images instead of a page.'),
        ...outputPath('Local PNG file to save the image to (with `change`: "-before" / "-after" are added).'),
      }),
      outputSchema: PreviewOut,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const images: { label: string; png: Buffer }[] = [];
        if (args.change) {
          if (args.document)
            throw new ApiCallError(
              400,
              'invalid_request',
              'Give `document` or `change`, not both.',
              'Drop one of them.',
            );
          for (const [label, url] of [
            ['before', args.change.before_preview_url],
            ['after', args.change.after_preview_url],
          ] as const) {
            if (url) images.push({ label, png: await api.download(url) });
          }
          if (images.length === 0) {
            throw new ApiCallError(
              400,
              'invalid_request',
              'This change has no preview links.',
              'Preview its page with `document` and `page` instead.',
            );
          }
        } else {
          if (!args.document)
            throw new ApiCallError(
              400,
              'invalid_request',
              'Give `document` (or `change`).',
              'Example: {"document": {"url": "https://example.com/a.pdf"}, "page": 1}.',
            );
          const source = await toSource(api, args.document as DocumentRef, local);
          const png = await api.preview({
            source,
            page: args.page,
            ...(args.region ? { region: args.region } : {}),
            ...(args.highlights ? { highlights: args.highlights } : {}),
            ...(args.width ? { width: args.width } : {}),
          });
          images.push({ label: `page ${args.page}`, png });
        }
        const target = args.output_path;
        const out = images.map(({ label, png }) => {
          let saved: string | undefined;
          if (target !== undefined) {
            const ext = path.extname(target) || '.png';
            const file =
              images.length > 1
                ? `${target.slice(0, target.length - path.extname(target).length)}-${label}${ext}`
                : target;
            saved = saveLocal(local, file, png);
          }
          return { label, ...pngSize(png), bytes: png.length, ...(saved ? { saved_to: saved } : {}) };
        });
        return {
          content: [
            ...images.map(({ png }) => ({
              type: 'image' as const,
              data: png.toString('base64'),
              mimeType: 'image/png',
            })),
            {
              type: 'text',
              text: out
                .map(
                  (o) =>
                    `${o.label}: ${o.width}×${o.height} PNG${o.saved_to ? `, saved to ${o.saved_to}` : ''}`,
                )
                .join('\n'),
            },
          ],
          structuredContent: { images: out },
        };
      }),
  );

  server.registerTool(
    'pdf_batch',
    {
      title: 'Fill a template for many records',
      description:
        'Runs the same edits over a template PDF once per record: `{name}` in find, replace, text and form values is ' +
        "replaced by the record's value. Records come inline, as CSV text (header row = placeholder names)" +
        `${local ? ', as a local CSV file' : ''} or as a CSV URL. Answers a job_id at once; pdf_job waits for it and lists ` +
        'one output per record. Example: {"template": {"file_id": "file_4Jq8x2"}, "edits": [{"find": "Dear Customer", ' +
        '"replace": "Dear {name}"}], "records": [{"name": "Ada"}, {"name": "Grace"}]}.',
      inputSchema: z.strictObject({
        template: doc('The template PDF'),
        edits: Edits,
        records: z
          .array(
            z.record(
              z.string().min(1).max(200),
              z.union([z.string().max(10_000), z.number(), z.boolean(), z.null()]),
            ),
          )
          .min(1)
          .max(50_000)
          .optional()
          .describe('One object per record: placeholder name → value.'),
        csv: z
          .string()
          .min(1)
          .max(10_000_000)
          .optional()
          .describe('The records as CSV text with a header row.'),
        ...localOnly({
          csv_path: z
            .string()
            .min(1)
            .max(4096)
            .optional()
            .describe('A local CSV file inside the allowed folder.'),
        }),
        records_url: z.string().min(1).max(4096).optional().describe('Address of a CSV the service fetches.'),
        options: Options.optional(),
      }),
      outputSchema: BatchOut,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    (args) =>
      guarded(async () => {
        const csvPath = args.csv_path;
        const given = [args.records, args.csv, csvPath, args.records_url].filter(
          (v) => v !== undefined,
        ).length;
        if (given !== 1) {
          throw new ApiCallError(
            400,
            'invalid_request',
            `Give exactly one of records, csv${local ? ', csv_path' : ''} or records_url.`,
            'Example: "records": [{"name": "Ada"}].',
          );
        }
        let records = args.records as Record<string, unknown>[] | undefined;
        if (args.csv !== undefined) records = parseCsv(args.csv);
        if (csvPath !== undefined) records = parseCsv(readFileSync(localInput(local, csvPath), 'utf8'));
        const template = await toSource(api, args.template as DocumentRef, local);
        const { body } = await api.json('POST', '/v1/batch', {
          template,
          edits: args.edits,
          ...(records ? { records } : { records_url: args.records_url }),
          ...(args.options ? { options: args.options } : {}),
        });
        const out = { job_id: String(body.job_id), status: 'queued', records: records?.length ?? 0 };
        return {
          content: [
            {
              type: 'text',
              text: `batch queued as job ${out.job_id}${records ? ` (${records.length} records)` : ''}: call pdf_job to wait for it`,
            },
          ],
          structuredContent: out,
        };
      }),
  );

  server.registerTool(
    'pdf_job',
    {
      title: 'Status and result of a job',
      description:
        'Reads a job (an async edit or a batch): status, progress and, once finished, the same result pdf_edit gives ' +
        '(a batch: one entry per record in `records`, each with its output link). With wait_seconds it waits up to ' +
        `that long (at most ${maxWait}) for the job to finish. Example: {"job_id": "job_7Hk2mQ", "wait_seconds": 60}.`,
      inputSchema: z.strictObject({
        job_id: z.string().min(1).max(100).describe('job_… as pdf_edit or pdf_batch returned it.'),
        wait_seconds: z
          .number()
          .min(0)
          .max(maxWait)
          .default(0)
          .describe('Wait up to this long for the job to finish.'),
        ...outputPath('Edit jobs: local file to save the output to.'),
        ...localOnly({
          output_dir: z
            .string()
            .min(1)
            .max(4096)
            .optional()
            .describe('Batch jobs: local folder for one PDF per record (record-0001.pdf …).'),
        }),
      }),
      outputSchema: JobOut,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args, extra) =>
      guarded(async () => {
        const until = Date.now() + args.wait_seconds * 1000;
        let job: Record<string, unknown>;
        const token = extra._meta?.progressToken;
        for (;;) {
          ({ body: job } = await api.json('GET', `/v1/jobs/${encodeURIComponent(args.job_id)}`));
          const finished = ['done', 'partial', 'failed'].includes(String(job.status));
          const p = job.progress as { done: number; total: number } | undefined;
          // A client that asked for progress (a progressToken) hears of each poll while waiting.
          if (token !== undefined && p && args.wait_seconds > 0) {
            await extra.sendNotification({
              method: 'notifications/progress',
              params: {
                progressToken: token,
                progress: p.done,
                total: p.total,
                message: `job ${job.status}`,
              },
            });
          }
          if (finished || Date.now() >= until || extra.signal.aborted) break;
          await new Promise((r) => setTimeout(r, Math.min(1000, Math.max(50, until - Date.now()))));
        }
        const finished = ['done', 'partial', 'failed'].includes(String(job.status));
        const saved: string[] = [];
        const a = args;
        if (finished && a.output_path !== undefined) {
          const output = job.output as { url?: string } | null | undefined;
          if (output?.url) saved.push(saveLocal(local, a.output_path, await api.download(output.url)));
        }
        if (finished && a.output_dir !== undefined) {
          const records =
            (job.records as ({ index: number; output?: { url?: string } | null } | null)[] | undefined) ?? [];
          for (const r of records) {
            if (r?.output?.url) {
              const name = `record-${String(r.index + 1).padStart(4, '0')}.pdf`;
              saved.push(saveLocal(local, path.join(a.output_dir, name), await api.download(r.output.url)));
            }
          }
        }
        const { timings: _t, ...rest } = job;
        const out = { ...rest, finished, ...(saved.length ? { saved_to: saved } : {}) };
        const progress = job.progress as { done: number; total: number };
        const text = finished
          ? job.kind === 'batch'
            ? `job ${job.job_id} ${job.status}: ${((job.records as unknown[]) ?? []).length} record(s)${saved.length ? `, ${saved.length} saved` : ''}`
            : resultSummary(out)
          : `job ${job.job_id} ${job.status}: ${progress.done}/${progress.total}`;
        return { content: [{ type: 'text', text }], structuredContent: out };
      }),
  );

  return server;
}

function parseCsv(text: string): Record<string, string>[] {
  try {
    return parseCsvRecords(text, 50_000);
  } catch (err) {
    throw new ApiCallError(
      400,
      'invalid_request',
      (err as Error).message.replace('records_url: ', 'csv: '),
      'Fix the CSV: a header row naming the placeholders, then one row per record.',
    );
  }
}

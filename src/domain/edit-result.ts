import type { FastifyInstance } from 'fastify';
import type { EngineEditResult } from '../engine/tasks.js';
import { fileUrl } from '../net/tokens.js';
import { previewUrl } from './change-preview.js';
import { failedEntries, unmatchedEntries } from './edit-failures.js';
import { createStoredFile, type FileOwner } from './files.js';

export type EditStatus = 'done' | 'partial' | 'failed';

/** Milliseconds to a tenth: finer is noise. */
function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** ISO 8601 UTC to the second (API-DECISIONS). */
function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * done: every edit applied; partial: some applied, others unmatched or rolled back;
 * failed: nothing applied (the caller answers 422 edit_failed when something was rolled back).
 */
export function editStatus(
  result: Pick<EngineEditResult, 'changes' | 'unmatched' | 'failed'> & { removed?: unknown[] },
): EditStatus {
  // A redaction that only found its string outside the page text (metadata, annotations)
  // changed the document without a verified page change: partial, never done.
  if (result.changes.length === 0) return (result.removed?.length ?? 0) > 0 ? 'partial' : 'failed';
  return result.unmatched.length === 0 && result.failed.length === 0 ? 'done' : 'partial';
}

/** One entry of `changes` (SPEC "Edit result"), with its preview links when stored. */
function changeEntry(
  c: EngineEditResult['changes'][number],
  beforeUrl: string | null,
  afterUrl: string | null,
) {
  return {
    page: c.page,
    op: c.op,
    ...(c.find != null ? { find: c.find } : {}),
    ...(c.replace != null ? { replace: c.replace } : {}),
    ...(c.text != null ? { text: c.text } : {}),
    ...(c.op === 'form' ? { field: c.field ?? null, value: c.value ?? null } : {}),
    // A replace or delete that landed in a filled form field says which, and its new value.
    ...(c.op !== 'form' && c.field ? { field: c.field, value: c.value ?? null } : {}),
    ...(c.op === 'replace' && c.alignment ? { alignment: c.alignment } : {}),
    font_source: c.font_source,
    font_used: c.font_used,
    verified: c.verified,
    collateral_pixels: c.collateral_pixels,
    box: c.box,
    before_preview_url: beforeUrl,
    after_preview_url: afterUrl,
    edit_index: c.edit_index,
  };
}

/**
 * Builds the result body of SPEC "Edit result" for an edit whose output is (being) stored
 * as `output` (the caller stores the output itself: src/domain/run-edit.ts), storing the
 * before/after previews of each change when they are not lazy (derived files of the output,
 * deleted with it).
 */
export async function buildEditResult(
  fastify: Pick<FastifyInstance, 'config' | 'db' | 'blobs'>,
  owner: FileOwner,
  sourceFileId: string | undefined,
  result: EngineEditResult,
  usage: { pages_billed: number; remaining: number | null },
  {
    store = true,
    lazyPreviews = false,
    beforeFileId,
    output: outputFile,
  }: {
    store?: boolean;
    lazyPreviews?: boolean;
    /** The stored file a lazy before preview is drawn from, when it is not `sourceFileId`. */
    beforeFileId?: string | undefined;
    /** The output's file (id and expiry): needed when the edit changed the document. */
    output?: { id: string; expiresAt: number } | undefined;
  } = {},
) {
  const { config } = fastify;
  const status = editStatus(result);
  let output: { file_id: string; url: string; expires_at: string } | null = null;
  const changes = [];
  if (!store) {
    // options.dry_run: what would change, with nothing saved (no output, no previews).
    for (const c of result.changes) changes.push(changeEntry(c, null, null));
  } else if (result.changes.length > 0 || result.removed.length > 0) {
    if (!outputFile) throw new Error('an edit that changed the document needs its output file');
    // Previews that are not lazy name their output by id (parent_id has no foreign key).
    const previews = await storePreviews(fastify, owner, outputFile.id, lazyPreviews ? [] : result.changes);
    const out = { id: outputFile.id, expires_at: outputFile.expiresAt };
    output = {
      file_id: out.id,
      url: fileUrl(config, out.id, 'get', out.expires_at),
      expires_at: iso(out.expires_at),
    };
    if (lazyPreviews) {
      // Links only: each side is rendered from the stored source or output when fetched.
      const link = (c: EngineEditResult['changes'][number], side: 'before' | 'after') =>
        previewUrl(
          config,
          out.id,
          side,
          c.page,
          c.box,
          out.expires_at,
          sourceFileId === undefined ? beforeFileId : undefined,
        );
      for (const c of result.changes) changes.push(changeEntry(c, link(c, 'before'), link(c, 'after')));
    }
    previews.forEach(([before, after], i) => {
      changes.push(changeEntry(result.changes[i]!, before, after));
    });
  }
  return {
    status,
    changes,
    unmatched: unmatchedEntries(result),
    failed: failedEntries(result),
    warnings: result.warnings,
    // SPEC rule 12: what the document was classified as, with the evidence (empty: ordinary).
    flags: (result.flags ?? []).map((f) => ({ kind: f.kind, evidence: f.evidence })),
    ...(result.flatten_skipped?.length ? { flatten_skipped: result.flatten_skipped } : {}),
    ...redactionReport(result),
    output,
    ...(store ? {} : { dry_run: true }),
    usage,
    // Server-side time of the engine call per stage (documented in the OpenAPI document).
    timings: {
      parse_ms: round(result.timings.parse_ms),
      edit_ms: round(result.timings.edit_ms),
      render_ms: round(result.timings.render_ms),
      diff_ms: round(result.timings.diff_ms),
      save_ms: round(result.timings.save_ms),
      mark_ms: round(result.timings.mark_ms),
      total_ms: round(result.timings.total_ms),
    },
  };
}

/**
 * Stores the before and after preview of each change (derived from output `outputId`), all
 * at once; their links, per change, in order (null for a side the engine did not draw).
 */
async function storePreviews(
  fastify: Pick<FastifyInstance, 'config' | 'db' | 'blobs'>,
  owner: FileOwner,
  outputId: string,
  changes: EngineEditResult['changes'],
): Promise<[string | null, string | null][]> {
  const { config, db, blobs } = fastify;
  const preview = async (png: Uint8Array): Promise<string | null> => {
    if (png.byteLength === 0) return null;
    const f = await createStoredFile(db, blobs, owner, {
      kind: 'preview',
      contentType: 'image/png',
      ttlMs: config.fileTtlMs,
      parentId: outputId,
      bytes: Buffer.from(png.buffer, png.byteOffset, png.byteLength),
    });
    return fileUrl(config, f.id, 'get', f.expires_at);
  };
  return Promise.all(
    changes.map(async (c) => {
      const [before, after] = await Promise.all([preview(c.before_png), preview(c.after_png)]);
      return [before, after] as [string | null, string | null];
    }),
  );
}

/** `removed` and `residual` of a result with redactions (absent otherwise). */
function redactionReport(result: EngineEditResult) {
  const redacts =
    result.changes.some((c) => c.op === 'redact') || result.removed.length > 0 || result.residual.length > 0;
  if (!redacts) return {};
  const where = (x: { index: number; kind: string; page?: number | null; where: string }) => ({
    index: x.index,
    kind: x.kind,
    page: x.page ?? null,
    where: x.where,
  });
  return {
    removed: result.removed.map(where),
    residual: result.residual.map((r) => ({ ...where(r), text: r.text })),
  };
}

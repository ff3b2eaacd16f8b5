import type { FastifyInstance } from 'fastify';
import { billingUnits, charge, usageOf } from '../billing/meter.js';
import { PLANS } from '../billing/plans.js';
import { type BillingSubject, planOf } from '../billing/subject.js';
import { ocrCacheFor } from '../engine/ocr-cache.js';
import type { EngineEdit, EngineEditResult } from '../engine/tasks.js';
import type { EditOptions } from '../schemas/edit.js';
import { engineOcr } from './edit-request.js';
import { buildEditResult } from './edit-result.js';
import type { FileOwner } from './files.js';
import { acceptedCurrentTerms } from './terms.js';

/** What running an edit needs from the service: the sync route and the job runner both pass it. */
export type EditServices = Pick<FastifyInstance, 'config' | 'db' | 'blobs' | 'engine'>;

export interface RunEditInput {
  owner: FileOwner;
  subject: BillingSubject;
  /** The ledger's unique work id: the idempotency work id (sync) or the job id (job).
   * Undefined: not charged here (a batch record; the batch is charged once at its end). */
  workId: string | undefined;
  pdf: Buffer;
  password: string | undefined;
  edits: EngineEdit[];
  options: EditOptions | undefined;
  /** The SAMPLE mark's text for test-mode and keyless callers (src/domain/sample-mark.ts). */
  mark: string | undefined;
  /** The caller's stored file the document came from: outputs are derived from it. */
  sourceFileId: string | undefined;
  /** A stored copy of the document that is not the caller's (a job's input, kept as long
   * as the job's outputs): with no `sourceFileId`, previews are drawn from it when fetched. */
  previewSourceId?: string | undefined;
  /** Engine budget of a job (config.jobs.timeoutMs); a sync edit keeps the pool's. */
  timeoutMs?: number;
  /** options.dry_run: planned and verified, nothing stored, nothing billed. */
  dryRun?: boolean;
  /** watermarkOffAllowed(subject), when the caller already knows it (a batch asks once
   * for all its records); else it is read from the account. */
  watermarkOffAllowed?: boolean;
  /** A batch record: every record edits the same template, so its engine process reuses
   * the renders of the template's unedited pages (`options.template_cache`, kept per
   * process by the exact bytes they show: crates/pdfedit-engine/src/template.rs). The
   * result is the one an uncached edit gives. */
  templateCache?: boolean;
}

export type EditBody = Awaited<ReturnType<typeof buildEditResult>>;

export type RunEditOutcome =
  /** Every edit that matched was rolled back: nothing to bill, nothing stored. */
  | { kind: 'all_failed'; result: EngineEditResult }
  | {
      kind: 'ok';
      result: EngineEditResult;
      body: EditBody;
      /** Billing units charged (or, with no work id, to be charged by the caller). */
      pagesBilled: number;
      /** Of the pages touched, how many were read by OCR (each counts five in pagesBilled). */
      ocrPages: number;
    };

/**
 * The one path of an edit: engine call, one charge per work id (a re-run bills nothing
 * more), output and previews stored, result body assembled. Quota is the caller's to check
 * before (sync: before the engine; job: before queueing).
 */
export async function runEdit(svc: EditServices, input: RunEditInput): Promise<RunEditOutcome> {
  const cache = ocrCacheFor(svc.config);
  const { ocr, docKey } = engineOcr(input.options, input.pdf, cache);
  // Previews are rendered when first fetched, from the stored source and output (issue 18
  // item 5), when both are stored and open without a password; a dry run has none.
  const lazyPreviews =
    input.dryRun === true ||
    (input.password === undefined && (input.sourceFileId ?? input.previewSourceId) !== undefined);
  const result = await svc.engine.edit(
    {
      pdf: input.pdf,
      ...(input.password !== undefined ? { password: input.password } : {}),
      edits: input.edits,
      options: {
        font: { policy: input.options?.font?.policy ?? 'prefer_exact' },
        break_signature: input.options?.break_signature ?? false,
        ...(input.mark !== undefined ? { mark: input.mark } : {}),
        watermark: input.options?.watermark ?? 'auto',
        watermark_off_allowed: input.watermarkOffAllowed ?? (await watermarkOffAllowed(svc, input.subject)),
        ...ocr,
        lazy_previews: lazyPreviews,
        ...(input.templateCache ? { template_cache: true } : {}),
        limits: PLANS[planOf(input.subject)].engineLimits,
      },
    },
    input.timeoutMs,
  );
  if (docKey !== undefined && result.ocr_read?.length) cache.put(docKey, result.ocr_read);
  // A redaction that only removed strings outside the page text still changed the document.
  if (result.changes.length === 0 && result.removed.length === 0 && result.failed.length > 0)
    return { kind: 'all_failed', result };
  const pages = result.pages_touched.length;
  // SPEC Limits: a touched page that was read by OCR counts five.
  const ocrPages = (result.ocr_pages ?? []).filter((p) => result.pages_touched.includes(p)).length;
  if (input.dryRun) {
    const usage = await usageOf(svc.db, input.subject, svc.config.now());
    const body = await buildEditResult(
      svc,
      input.owner,
      input.sourceFileId,
      result,
      { pages_billed: 0, remaining: usage.remaining },
      { store: false },
    );
    return { kind: 'ok', result, body, pagesBilled: 0, ocrPages: 0 };
  }
  // The output is stored first, then charged: an output that cannot be stored (disk full,
  // blob store down) is an error that bills nothing, and a crash between the two leaves an
  // unreferenced file that expires, while the re-run (same work id) is charged once.
  const body = await buildEditResult(
    svc,
    input.owner,
    input.sourceFileId,
    result,
    { pages_billed: 0, remaining: null },
    { lazyPreviews, beforeFileId: input.previewSourceId },
  );
  const charged =
    input.workId === undefined
      ? { billed: billingUnits(pages, ocrPages), remaining: null }
      : await charge(svc.db, input.subject, input.workId, pages, { ocrPages }, svc.config.now());
  body.usage = { pages_billed: charged.billed, remaining: charged.remaining };
  return { kind: 'ok', result, body, pagesBilled: charged.billed, ocrPages };
}

/**
 * SPEC rule 12: `watermark: off` on a flagged document is for Growth and Scale accounts that
 * accepted the current document-integrity terms (read from the account row, so an acceptance
 * counts from the next edit on). Keyless callers never may. The engine knows whether the
 * document is flagged and refuses `off` (403 forbidden_watermark_off) when this is false.
 */
export async function watermarkOffAllowed(
  svc: Pick<EditServices, 'db'>,
  subject: BillingSubject,
): Promise<boolean> {
  if (subject.kind !== 'account' || !PLANS[subject.plan].watermarkOffAllowed) return false;
  const row = await svc.db
    .selectFrom('accounts')
    .select(['terms_accepted_at', 'terms_version'])
    .where('id', '=', subject.accountId)
    .executeTakeFirst();
  return row !== undefined && acceptedCurrentTerms(row);
}

/** The body of an edit whose every matched edit was rolled back, for a job (a sync edit
 * answers 422 edit_failed instead). Nothing was billed. */
export async function allFailedBody(
  svc: EditServices,
  input: Pick<RunEditInput, 'owner' | 'subject' | 'sourceFileId'>,
  result: EngineEditResult,
): Promise<EditBody> {
  const usage = await usageOf(svc.db, input.subject, svc.config.now());
  return buildEditResult(svc, input.owner, input.sourceFileId, result, {
    pages_billed: 0,
    remaining: usage.remaining,
  });
}

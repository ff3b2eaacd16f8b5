import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { billingUnits, chargeIn, usageOf } from '../billing/meter.js';
import { PLANS } from '../billing/plans.js';
import { type BillingSubject, planOf } from '../billing/subject.js';
import { ocrCacheFor } from '../engine/ocr-cache.js';
import type { WrittenOutput } from '../engine/output-file.js';
import type { EngineEdit, EngineEditResult } from '../engine/tasks.js';
import type { EditOptions } from '../schemas/edit.js';
import { DiskBlobStore } from '../store/blobs-disk.js';
import type { Database } from '../store/schema.js';
import { engineOcr } from './edit-request.js';
import { buildEditResult } from './edit-result.js';
import {
  createStoredFile,
  deleteFile,
  dropReserved,
  type FileOwner,
  markStored,
  newFileId,
  type ProducedFile,
  producedBlobKey,
  putProduced,
  reserveProduced,
} from './files.js';
import { acceptedCurrentTerms, type TermsAcceptance } from './terms.js';

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
  /** A batch record, or a sync edit of a stored document (`source.file_id`, edited again
   * and again): every record edits the same template, so its engine process reuses
   * the renders of the template's unedited pages (`options.template_cache`, kept per
   * process by the exact bytes they show: crates/pdfedit-engine/src/template.rs). The
   * result is the one an uncached edit gives. */
  templateCache?: boolean;
  /** The caller's own record of the finished edit (the sync route: its idempotency answer),
   * written in the transaction that marks the output stored and charges it, so that the
   * three commit together. Called once, for an edit that was stored or charged. */
  commit?: (trx: Transaction<Database>, done: RunEditDone) => Promise<void>;
  /** The caller answers with the output's bytes (the sync route's `Accept:
   * application/pdf`): they come back from the engine, which then does not store them. */
  outputBytes?: boolean;
}

export type EditBody = Awaited<ReturnType<typeof buildEditResult>>;

export type RunEditOutcome =
  /** Every edit that matched was rolled back: nothing to bill, nothing stored. */
  { kind: 'all_failed'; result: EngineEditResult } | RunEditDone;

export interface RunEditDone {
  kind: 'ok';
  result: EngineEditResult;
  body: EditBody;
  /** Billing units charged (or, with no work id, to be charged by the caller). */
  pagesBilled: number;
  /** Of the pages touched, how many were read by OCR (each counts five in pagesBilled). */
  ocrPages: number;
}

/**
 * The one path of an edit: engine call, one charge per work id (a re-run bills nothing
 * more), output and previews stored, result body assembled. Quota is the caller's to check
 * before (sync: before the engine; job: before queueing).
 *
 * What the answer waits for after the engine (issue 18 item 5): the output's bytes, then one
 * transaction that marks its row stored, charges the work and writes the caller's record
 * (`commit`). The output's row was reserved while the engine worked, and so was the copy of
 * a document that is stored nowhere else (the before side of its lazy previews).
 */
export async function runEdit(svc: EditServices, input: RunEditInput): Promise<RunEditOutcome> {
  const cache = ocrCacheFor(svc.config);
  const { ocr, docKey } = engineOcr(input.options, input.pdf, cache);
  const dryRun = input.dryRun === true;
  // Previews are rendered when first fetched, from the stored document before the edit
  // and the output (issue 18 item 5), whenever both open without a password; a dry run
  // has none.
  const lazyPreviews = dryRun || input.password === undefined;
  const watermarkOff = input.watermarkOffAllowed ?? (await watermarkOffAllowed(svc, input.subject));
  const place = dryRun ? undefined : prepareOutput(svc, input, lazyPreviews);
  let result: EngineEditResult;
  try {
    if (place?.engineWrites) await place.reserved;
    const edited = svc.engine.edit(
      {
        pdf: input.pdf,
        ...(input.password !== undefined ? { password: input.password } : {}),
        edits: input.edits,
        options: {
          font: { policy: input.options?.font?.policy ?? 'prefer_exact' },
          break_signature: input.options?.break_signature ?? false,
          ...(input.mark !== undefined ? { mark: input.mark } : {}),
          watermark: input.options?.watermark ?? 'auto',
          watermark_off_allowed: watermarkOff,
          ...ocr,
          lazy_previews: lazyPreviews,
          ...(input.templateCache ? { template_cache: true } : {}),
          limits: PLANS[planOf(input.subject)].engineLimits,
        },
        ...(place?.engineWrites ? { output: place.file.blobKey } : {}),
      },
      input.timeoutMs,
    );
    // The engine process has the task (or its queue does): the copy of the document is
    // written while it works, not before it is asked (a multipart edit's 76 KB copy held
    // the engine back 0.7 ms).
    place?.startCopy();
    result = await edited;
  } catch (err) {
    place?.discard();
    throw err;
  }
  if (docKey !== undefined && result.ocr_read?.length) cache.put(docKey, result.ocr_read);
  // A redaction that only removed strings outside the page text still changed the document.
  const changed = result.changes.length > 0 || result.removed.length > 0;
  if (!changed && result.failed.length > 0) {
    place?.discard();
    return { kind: 'all_failed', result };
  }
  const pages = result.pages_touched.length;
  // SPEC Limits: a touched page that was read by OCR counts five.
  const ocrPages = (result.ocr_pages ?? []).filter((p) => result.pages_touched.includes(p)).length;
  if (!place) {
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
  if (!changed) place.discard();
  // The output's bytes and the body (previews stored when not lazy) at once. The output is
  // stored before it is charged: an output that cannot be stored (disk full, blob store
  // down) is an error that bills nothing.
  const [stored, built] = await Promise.allSettled([
    changed ? place.store(result.written ?? result.pdf) : undefined,
    buildEditResult(
      svc,
      input.owner,
      input.sourceFileId,
      result,
      { pages_billed: 0, remaining: null },
      {
        lazyPreviews,
        beforeFileId: input.previewSourceId ?? place.beforeId,
        ...(changed ? { output: place.file } : {}),
      },
    ),
  ]);
  if (stored.status === 'rejected') throw stored.reason;
  if (built.status === 'rejected') {
    if (stored.value) place.discard();
    throw built.reason;
  }
  try {
    return await commitEdit(svc, input, stored.value, {
      kind: 'ok',
      result,
      body: built.value,
      pagesBilled: billingUnits(pages, ocrPages),
      ocrPages,
    });
  } catch (err) {
    // Rolled back: the output's row is still reserved (a committed one is left alone).
    place.discard();
    throw err;
  }
}

/**
 * The edit's last writes, in one transaction when there is more than one: the output's
 * row marked stored, the charge (once per work id), the caller's record. A crash before
 * the commit leaves none of them (the re-run, same work id, stores and charges once); the
 * output's blob, written before, is removed by the retention sweep through its reserved row.
 */
async function commitEdit(
  svc: EditServices,
  input: RunEditInput,
  output: StoredOutput | undefined,
  done: RunEditDone,
): Promise<RunEditDone> {
  const pages = done.result.pages_touched.length;
  const { workId, commit } = input;
  const mark = async (dbx: Kysely<Database>) => {
    const stored = output
      ? { blobKey: output.blobKey, size: output.size, sha256: output.sha256, produced: true }
      : undefined;
    if (output && stored && !(await markStored(dbx, output.id, stored))) {
      throw new Error(`file ${output.id} was deleted while it was being stored`);
    }
  };
  if (workId === undefined && !commit) {
    // A batch record: its output only; the batch is charged once at its end.
    await mark(svc.db);
    done.body.usage = { pages_billed: done.pagesBilled, remaining: null };
    return done;
  }
  return svc.db.transaction().execute(async (trx) => {
    await mark(trx);
    const charged =
      workId === undefined
        ? { billed: done.pagesBilled, remaining: null }
        : await chargeIn(trx, input.subject, workId, pages, { ocrPages: done.ocrPages }, svc.config.now());
    done.body.usage = { pages_billed: charged.billed, remaining: charged.remaining };
    done.pagesBilled = charged.billed;
    await commit?.(trx, done);
    return done;
  });
}

/** An output stored under its reserved row (not yet marked stored). */
interface StoredOutput extends ProducedFile {
  size: number;
  sha256: string;
}

/** Where an edit's output goes, prepared while the engine works. */
interface OutputPlace {
  /** The output's id, blob key and expiry (its row is being reserved). */
  file: { id: string; blobKey: string; expiresAt: number };
  /** The engine process may write the output under `file.blobKey` itself (a local-disk
   * store whose directory the pool's processes were given, src/engine/output-file.ts). */
  engineWrites: boolean;
  /** Settles when the output's row is reserved (rejects if it could not be). When the
   * engine writes the output, the engine is asked only after this: a blob on disk is then
   * always named by a row, which the retention sweep finds even if this process dies
   * before it marks the row stored or drops it. */
  reserved: Promise<unknown>;
  /** The stored copy of the document its lazy before previews are drawn from, when the
   * document is stored nowhere else. */
  beforeId: string | undefined;
  /** Starts writing that copy (its blob and row): once the engine has been asked, since
   * nothing needs it before `store`. Idempotent; nothing after `discard`. */
  startCopy(): void;
  /** Writes the output's bytes (after the reservation, and the copy, are in), or takes
   * what the engine process wrote under the reserved key. */
  store(pdf: Uint8Array | WrittenOutput): Promise<StoredOutput>;
  /** Nothing to store after all (the edit failed or changed nothing): the reserved row and
   * the copy go, in the background; what fails here the retention sweep removes later. */
  discard(): void;
}

/** Resolves to the value or the error: a promise that is never left rejected unheard. */
function settled<T>(p: Promise<T>): Promise<PromiseSettledResult<T>> {
  return Promise.allSettled([p]).then(([r]) => r!);
}

function settledValue<T>(r: PromiseSettledResult<T>): T {
  if (r.status === 'rejected') throw r.reason;
  return r.value;
}

function prepareOutput(svc: EditServices, input: RunEditInput, lazyPreviews: boolean): OutputPlace {
  const { config, db, blobs } = svc;
  const now = config.now();
  const id = newFileId();
  const blobKey = producedBlobKey(id);
  // The engine process writes the output itself when the store is the local disk its pool
  // was given (src/engine/output-file.ts): the bytes never cross to this process. The row
  // is reserved first (the engine is asked once its insert is in: on SQLite a few
  // microtasks), and marked stored only after the engine's reply says the bytes are in
  // place; a row that is never marked is dropped (`discard`) or expires, and the retention
  // sweep removes the blob its key names, as for an output written here. Without an engine
  // write, the insert runs beside the engine call.
  const engineWrites =
    input.outputBytes !== true &&
    blobs instanceof DiskBlobStore &&
    svc.engine.outputDir !== undefined &&
    path.resolve(blobs.dir) === svc.engine.outputDir;
  const reserved = settled(
    reserveProduced(db, input.owner, {
      id,
      blobKey,
      kind: 'output',
      contentType: 'application/pdf',
      ttlMs: config.fileTtlMs,
      parentId: input.sourceFileId ?? null,
      now,
    }),
  );
  // A document sent in the request (multipart, a URL) is stored nowhere: its copy is the
  // before side of the lazy previews (instead of previews rendered before answering). It
  // is derived from the output, so deleting the output deletes it.
  const beforeId =
    lazyPreviews && input.sourceFileId === undefined && input.previewSourceId === undefined
      ? newFileId()
      : undefined;
  let copy: Promise<PromiseSettledResult<unknown>> | undefined;
  let discarded = false;
  const startCopy = () => {
    if (beforeId === undefined || copy !== undefined || discarded) return;
    copy = settled(
      createStoredFile(db, blobs, input.owner, {
        id: beforeId,
        kind: 'upload',
        contentType: 'application/pdf',
        ttlMs: config.fileTtlMs,
        parentId: id,
        bytes: input.pdf,
        now,
        cache: false,
      }),
    );
  };
  const discard = () => {
    if (discarded) return;
    discarded = true;
    void (async () => {
      // Without a reserved row the engine was never asked to write (see `reserved`).
      if ((await reserved).status === 'fulfilled') await dropReserved(db, id);
      if (copy && (await copy).status === 'fulfilled') await deleteFile(db, blobs, input.owner, beforeId!);
    })().catch(() => {});
  };
  return {
    file: { id, blobKey, expiresAt: now + config.fileTtlMs },
    engineWrites,
    // Awaited (by runEdit) only when the engine writes; otherwise never made, so a failed
    // reservation is not an unheard rejection here (store() reports it).
    reserved: engineWrites ? reserved.then(settledValue) : Promise.resolve(),
    beforeId,
    startCopy,
    discard,
    async store(pdf) {
      startCopy();
      const [file, put] = await Promise.allSettled([
        reserved.then(async (r) => {
          const f = settledValue(r);
          // Built field by field, not by spreading (old-generation garbage per edit:
          // see src/billing/meter.ts chargeIn).
          const written =
            pdf instanceof Uint8Array
              ? await putProduced(blobs, f, Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength))
              : pdf;
          const out: StoredOutput = {
            id: f.id,
            blobKey: f.blobKey,
            expiresAt: f.expiresAt,
            size: written.size,
            sha256: written.sha256,
          };
          return out;
        }),
        copy?.then(settledValue),
      ]);
      if (file.status === 'rejected' || put.status === 'rejected') {
        // (Written by the engine process, the blob goes with the row, or at once without one.)
        discard();
        throw file.status === 'rejected' ? file.reason : (put as PromiseRejectedResult).reason;
      }
      return file.value;
    },
  };
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
  /** The account's acceptance when already read (with the key): no second read. */
  terms?: TermsAcceptance,
): Promise<boolean> {
  if (subject.kind !== 'account' || !PLANS[subject.plan].watermarkOffAllowed) return false;
  const row =
    terms ??
    (await svc.db
      .selectFrom('accounts')
      .select(['terms_accepted_at', 'terms_version'])
      .where('id', '=', subject.accountId)
      .executeTakeFirst());
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

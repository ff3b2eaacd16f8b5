import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { quotaCheck } from '../billing/meter.js';
import { engineBudgetMs, PLANS } from '../billing/plans.js';
import { billingSubject } from '../billing/subject.js';
import { type OpenedDocument, openDocument, openSource } from '../domain/document.js';
import { failedEntries, unmatchedEntries } from '../domain/edit-failures.js';
import { checkOptions, toEngineEdits } from '../domain/edit-request.js';
import type { FileOwner } from '../domain/files.js';
import {
  hashBody,
  type IdempotentResponse,
  idempotencyScope,
  sendAnswer,
  withIdempotency,
} from '../domain/idempotency.js';
import { checkWebhookUrl, createJob } from '../domain/jobs.js';
import { keylessFileOwner } from '../domain/keyless-owner.js';
import { type RunEditDone, runEdit, watermarkOffAllowed } from '../domain/run-edit.js';
import { sampleMarkFor } from '../domain/sample-mark.js';
import { ocrBudgetMs } from '../engine/ocr-cache.js';
import { ApiError } from '../kernel/api-error.js';
import type { Principal } from '../kernel/principal.js';
import multipartForms from '../plugins/external/multipart.js';
import { Binary, IdempotencyHeaders } from '../schemas/common.js';
import { type Edit, EditBody, type EditOptions } from '../schemas/edit.js';
import { errorResponses } from '../schemas/errors.js';
import { ref } from '../schemas/ref.js';
import { EditResult, Queued } from '../schemas/results.js';
import { readEditForm } from './edit-form.js';

/** The multipart form of POST /v1/edit, for the document (the route reads the parts itself). */
const MultipartEdit = Type.Object(
  {
    file: Binary,
    edits: Type.String({ description: 'JSON array of edit objects.' }),
    options: Type.Optional(Type.String({ description: 'JSON object of options.' })),
    password: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

interface EditInput {
  doc: OpenedDocument;
  sourceFileId: string | undefined;
  edits: Edit[];
  options: EditOptions | undefined;
  /** SHA-256 (hex) of a multipart form's document, hashed once for the open and the record. */
  sha256?: string;
}

/** The multipart form: `file`, `edits`, `options`, `password` and nothing else (SPEC). */
async function readMultipart(
  fastify: FastifyInstance,
  request: FastifyRequest,
  principal: Principal | undefined,
): Promise<EditInput> {
  const plan = PLANS[principal?.plan ?? 'keyless'];
  const { file, edits, options, password } = await readEditForm(request, plan.maxFileBytes);
  checkWebhookUrl(options?.webhook_url, fastify.config.allowPrivateUrls);
  const sha256 = createHash('sha256').update(file).digest('hex');
  const info = await openDocument(fastify, principal, file, password, sha256);
  return { doc: { bytes: file, password, info }, sourceFileId: undefined, edits, options, sha256 };
}

/** The request as the idempotency record hashes it: multipart bytes count by their digest
 * (canonicalJson writes a Buffer as its SHA-256 in hex, so the digest itself hashes the same). */
function idempotencyBody(input: EditInput, raw: unknown): unknown {
  return (
    raw ?? {
      file: input.sha256 ?? input.doc.bytes,
      edits: input.edits,
      options: input.options,
      password: input.doc.password,
    }
  );
}

/** The answer of an edit that applied: its result, or with `Accept: application/pdf` the
 * edited document itself (when it changed). */
function answerOf(done: RunEditDone, pdf: boolean): IdempotentResponse {
  const { result, body } = done;
  if (pdf && (result.changes.length > 0 || result.removed.length > 0)) {
    return {
      status: 200,
      headers: {
        'content-type': 'application/pdf',
        'x-edit-status': body.status,
        'x-pages-billed': String(done.pagesBilled),
      },
      body: Buffer.from(result.pdf.buffer, result.pdf.byteOffset, result.pdf.byteLength),
    };
  }
  return { status: 200, headers: {}, body };
}

/** Whose the outputs are: the key's account and mode, or the keyless system owner. */
async function outputOwner(fastify: FastifyInstance, principal: Principal | undefined): Promise<FileOwner> {
  return principal ? { accountId: principal.accountId, mode: principal.mode } : keylessFileOwner(fastify.db);
}

/**
 * POST /v1/edit: replace, delete and redact text, every change verified by rendering
 * (SPEC rules 1–8). A key is optional (SPEC Authentication 3): without one the caller is on the keyless
 * tier, counted per client address group (20 pages a day, the keyless rate limit). Large or
 * `options.async` edits of keyed callers become jobs (202).
 */
const description =
  'JSON (`source`, `edits`, `options`) or multipart (`file`, `edits`, `options`, `password`). ' +
  'Over the sync page limit (free 20 pages, starter 30, growth and scale 50), with `options.async` ' +
  'or with `options.webhook_url` the answer is 202 with a job: poll GET /v1/jobs/{job_id} or ' +
  'receive `job.done`. ' +
  'Quota is checked before any work against the document page count (the worst case). ' +
  'Asynchronous edits need a key. ' +
  'The key is optional: without an Authorization header the call runs on the keyless free tier ' +
  '(20 pages a day per client address, IPv6 counted by /64; 10 requests a minute; `source.url` or ' +
  'multipart, not `file_id`). Outputs of keyless calls and of `sk_test_` keys carry a small light-grey ' +
  '"SAMPLE" mark in a corner of every page (it extracts as the text SAMPLE) and the warning `sample_mark`; ' +
  'live keys never get it.';

export default async function editRoutes(fastify: FastifyInstance): Promise<void> {
  await fastify.register(multipartForms);

  // The key is optional: keyless callers try the API on the free tier (SPEC Authentication 3).
  const onRequest = [fastify.optionalKey, fastify.rateLimit];
  const schema = {
    summary: 'Edit a PDF',
    description,
    tags: ['edit'],
    headers: IdempotencyHeaders,
    // Fastify validates the JSON form; the multipart form's parts are read and checked by
    // readMultipart (its schema is in config.openapi, for the document).
    body: { content: { 'application/json': { schema: ref(EditBody) } } },
    response: {
      200: {
        description: 'The result, or the PDF with `Accept: application/pdf`.',
        content: { 'application/json': { schema: ref(EditResult) }, 'application/pdf': { schema: Binary } },
      },
      202: ref(Queued, { description: 'Queued as a job.' }),
      ...errorResponses(400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 502, 504),
    },
  };
  const config = { openapi: { body: { 'multipart/form-data': MultipartEdit } } };
  fastify.post('/v1/edit', { onRequest, schema, config }, async (request, reply) => {
    const principal = request.principal;
    const { config, db } = fastify;
    let input: EditInput;
    let rawBody: unknown;
    if (request.isMultipart()) {
      input = await readMultipart(fastify, request, principal);
    } else {
      // Only the JSON form is validated against EditRequest (schema.body above); any other
      // body Fastify parses (text/plain) or none at all never reaches the edit.
      if (request.mediaType !== 'application/json' || typeof request.body !== 'object' || !request.body) {
        throw new ApiError(
          'invalid_request',
          'Send the edit as JSON (application/json) or a multipart form.',
        );
      }
      const body = request.body as EditBody;
      rawBody = body;
      // Before the source is fetched: a webhook the policy refuses is a 400 now, not a
      // delivery that fails later.
      checkWebhookUrl(body.options?.webhook_url, config.allowPrivateUrls);
      input = {
        doc: await openSource(fastify, principal, body.source),
        sourceFileId: body.source.file_id,
        edits: body.edits,
        options: body.options,
      };
    }
    checkOptions(input.options);
    const { doc } = input;
    const engineEdits = toEngineEdits(input.edits, doc.info.pageCount);
    if (doc.info.signatures.length > 0 && !input.options?.break_signature) {
      throw new ApiError(
        'signed_document',
        'The document carries a digital signature that an edit would break.',
      );
    }
    const subject = billingSubject(principal, request.ip);
    const mark = sampleMarkFor(principal);
    // Over the plan's sync page limit, or asked for (async, or a webhook to call when
    // done), the edit is queued as a job and answered 202 (SPEC "States").
    const plan = principal?.plan ?? 'keyless';
    const dryRun = input.options?.dry_run === true;
    if (dryRun && (input.options?.async === true || input.options?.webhook_url !== undefined)) {
      throw new ApiError(
        'invalid_request',
        'options.dry_run answers in the request: it cannot be combined with options.async or options.webhook_url.',
      );
    }
    // A dry run saves nothing, so it never becomes a job, whatever the page count.
    const queued =
      !dryRun &&
      (input.options?.async === true ||
        input.options?.webhook_url !== undefined ||
        doc.info.pageCount > PLANS[plan].syncPageLimit);
    if (queued && !principal) {
      // A job is polled with GET /v1/jobs/{id}, which needs a key; the keyless tier's
      // documents are within its sync page limit, so only an explicit ask lands here.
      throw new ApiError(
        'invalid_request',
        'Asynchronous edits (options.async, options.webhook_url) need an API key.',
        { hint: 'Send Authorization: Bearer sk_test_… or sk_live_…; keyless calls run synchronously.' },
      );
    }
    const wantsPdf = (request.headers.accept ?? '')
      .split(',')
      .some((t) => t.trim().startsWith('application/pdf'));
    const answer = await withIdempotency(
      {
        db,
        scope: idempotencyScope(principal, request.ip),
        route: wantsPdf ? 'POST /v1/edit (pdf)' : 'POST /v1/edit',
        key: request.headers['idempotency-key'],
        bodyHash: hashBody(idempotencyBody(input, rawBody)),
        leaseMs: 2 * config.syncTimeoutMs,
        now: config.now,
      },
      async ({ workId, settle }): Promise<IdempotentResponse> => {
        // Refused before any work: the worst case is every page of the document.
        // The worst case: every page touched, each read by OCR (five) when OCR is on.
        const worst = doc.info.pageCount * (input.options?.ocr ? 5 : 1);
        await quotaCheck(db, subject, worst, config.now());
        if (queued && principal) {
          // A job: the same edit, run by a worker (src/queue/runner.ts → runEdit).
          const job = await createJob(fastify, {
            owner: { accountId: principal.accountId, mode: principal.mode },
            plan: principal.plan,
            kind: 'edit',
            pdf: doc.bytes,
            password: doc.password,
            pageCount: doc.info.pageCount,
            sourceFileId: input.sourceFileId,
            edits: input.edits,
            options: input.options,
          });
          await fastify.jobs.submit(job);
          return { status: 202, headers: {}, body: { job_id: job.id } };
        }
        // Plan concurrency: sync edits of an account above it answer 429 (jobs queue instead).
        const owner = await outputOwner(fastify, principal);
        // Read with the key: the edit asks the account nothing more.
        const offAllowed = await watermarkOffAllowed(fastify, subject, request.accountTerms);
        // The answer is written with the output's row and the charge, in their transaction.
        let answer: IdempotentResponse | undefined;
        const commit = async (trx: Parameters<typeof settle>[0], done: RunEditDone) => {
          answer = answerOf(done, wantsPdf && !dryRun);
          await settle(trx, answer);
        };
        const outcome = await fastify.editSlots(principal, () =>
          runEdit(fastify, {
            owner,
            subject,
            workId,
            pdf: doc.bytes,
            password: doc.password,
            edits: engineEdits,
            options: input.options,
            mark,
            sourceFileId: input.sourceFileId,
            timeoutMs: ocrBudgetMs(
              engineBudgetMs(plan, config.syncTimeoutMs),
              input.options?.ocr ? doc.info.pageCount : 0,
            ),
            dryRun,
            watermarkOffAllowed: offAllowed,
            // A stored document is edited again and again: its engine process keeps the
            // renders before of its unedited pages, keyed by the document's exact bytes
            // (crates/pdfedit-engine/src/template.rs); the result is the uncached one.
            templateCache: input.sourceFileId !== undefined,
            commit,
            // Answered with the output's bytes: they come back from the engine process.
            outputBytes: wantsPdf && !dryRun,
          }),
        );
        const { result } = outcome;
        if (outcome.kind === 'all_failed') {
          const err = new ApiError(
            'edit_failed',
            'Every edit that matched failed verification and was rolled back.',
            {
              extra: {
                failed: failedEntries(result),
                unmatched: unmatchedEntries(result),
              },
            },
          );
          return { status: err.status, headers: {}, body: err.toBody() };
        }
        return answer ?? answerOf(outcome, wantsPdf && !dryRun);
      },
    );
    return sendAnswer(reply, answer);
  });
}

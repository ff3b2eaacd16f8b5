import multipart from '@fastify/multipart';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { quotaCheck } from '../billing/meter.js';
import { PLANS } from '../billing/plans.js';
import { billingSubject } from '../billing/subject.js';
import { ApiError } from '../domain/api-error.js';
import { type OpenedDocument, openSource } from '../domain/document.js';
import { checkOptions, toEngineEdits } from '../domain/edit-request.js';
import type { FileOwner } from '../domain/files.js';
import {
  hashBody,
  type IdempotentResponse,
  idempotencyScope,
  withIdempotency,
} from '../domain/idempotency.js';
import { createJob } from '../domain/jobs.js';
import { keylessFileOwner } from '../domain/keyless-owner.js';
import type { Principal } from '../domain/principal.js';
import { runEdit } from '../domain/run-edit.js';
import { sampleMarkFor } from '../domain/sample-mark.js';
import {
  type Edit,
  EditBody,
  type EditOptions,
  EditOptions as EditOptionsSchema,
  Edits,
} from '../schemas/edit.js';

const editsCheck = TypeCompiler.Compile(Edits);
const optionsCheck = TypeCompiler.Compile(EditOptionsSchema);
const bodyCheck = TypeCompiler.Compile(EditBody);

/** A multipart field holding JSON, checked against the same schema as the JSON form. */
function parseJsonField<T>(
  name: string,
  raw: string,
  check: { Check(v: unknown): boolean; Errors(v: unknown): Iterable<{ path: string; message: string }> },
): T {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ApiError('invalid_request', `The multipart field "${name}" is not valid JSON.`);
  }
  if (!check.Check(value)) {
    const first = [...check.Errors(value)][0];
    const where = `${name}${first?.path.replaceAll('/', '.') ?? ''}`;
    throw new ApiError('invalid_request', `${where}: ${first?.message ?? 'is invalid'}.`);
  }
  return value as T;
}

interface EditInput {
  doc: OpenedDocument;
  sourceFileId: string | undefined;
  edits: Edit[];
  options: EditOptions | undefined;
}

/** The multipart form: `file`, `edits`, `options`, `password` and nothing else (SPEC). */
async function readMultipart(
  fastify: FastifyInstance,
  request: FastifyRequest,
  principal: Principal | undefined,
): Promise<EditInput> {
  const plan = PLANS[principal?.plan ?? 'keyless'];
  let file: Buffer | undefined;
  let edits: Edit[] | undefined;
  let options: EditOptions | undefined;
  let password: string | undefined;
  for await (const part of request.parts({
    limits: { fileSize: plan.maxFileBytes, files: 1, fields: 3, parts: 4 },
  })) {
    if (part.type === 'file') {
      if (part.fieldname !== 'file')
        throw new ApiError('invalid_request', `Unknown multipart file field "${part.fieldname}".`);
      file = await part.toBuffer();
    } else if (part.fieldname === 'edits') {
      edits = parseJsonField<Edit[]>('edits', String(part.value), editsCheck);
    } else if (part.fieldname === 'options') {
      options = parseJsonField<EditOptions>('options', String(part.value), optionsCheck);
    } else if (part.fieldname === 'password') {
      password = String(part.value);
    } else {
      throw new ApiError('invalid_request', `Unknown multipart field "${part.fieldname}".`, {
        hint: 'The multipart form takes file, edits, options and password only.',
      });
    }
  }
  if (!file) throw new ApiError('invalid_request', 'The multipart form needs a "file" part with the PDF.');
  if (!edits)
    throw new ApiError('invalid_request', 'The multipart form needs an "edits" field (a JSON array).');
  const info = await fastify.engine.open(file, password);
  if (info.pageCount > plan.maxPages) {
    throw new ApiError(
      'too_large',
      `The document has ${info.pageCount} pages; the ${plan.name} plan allows ${plan.maxPages}.`,
    );
  }
  return { doc: { bytes: file, password, info }, sourceFileId: undefined, edits, options };
}

/** The request as the idempotency record hashes it: multipart bytes count by their digest. */
function idempotencyBody(input: EditInput, raw: unknown): unknown {
  return (
    raw ?? { file: input.doc.bytes, edits: input.edits, options: input.options, password: input.doc.password }
  );
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
export default async function editRoutes(fastify: FastifyInstance): Promise<void> {
  await fastify.register(multipart, { limits: { fieldSize: 1024 * 1024 } });

  // The key is optional: keyless callers try the API on the free tier (SPEC Authentication 3).
  const onRequest = [fastify.optionalKey, fastify.rateLimit];
  fastify.post('/v1/edit', { onRequest }, async (request, reply) => {
    const principal = request.principal;
    const { config, db } = fastify;
    let input: EditInput;
    let rawBody: unknown;
    if (request.isMultipart()) {
      input = await readMultipart(fastify, request, principal);
    } else {
      if (!bodyCheck.Check(request.body)) {
        const first = [...bodyCheck.Errors(request.body)][0];
        throw new ApiError(
          'invalid_request',
          `body${first?.path.replaceAll('/', '.') ?? ''}: ${first?.message ?? 'is invalid'}.`,
        );
      }
      const body = request.body as EditBody;
      rawBody = body;
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
    const queued =
      input.options?.async === true ||
      input.options?.webhook_url !== undefined ||
      doc.info.pageCount > PLANS[plan].syncPageLimit;
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
      async ({ workId }): Promise<IdempotentResponse> => {
        // Refused before any work: the worst case is every page of the document.
        await quotaCheck(db, subject, doc.info.pageCount, config.now());
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
        const outcome = await runEdit(fastify, {
          owner: await outputOwner(fastify, principal),
          subject,
          workId,
          pdf: doc.bytes,
          password: doc.password,
          edits: engineEdits,
          options: input.options,
          mark,
          sourceFileId: input.sourceFileId,
        });
        const { result } = outcome;
        if (outcome.kind === 'all_failed') {
          const err = new ApiError(
            'edit_failed',
            'Every edit that matched failed verification and was rolled back.',
            {
              extra: {
                failed: result.failed.map((f) => ({
                  index: f.edit_index,
                  op: f.op,
                  reason: f.reason,
                  message: f.message,
                  ...(f.field ? { field: f.field } : {}),
                })),
                unmatched: result.unmatched.map((u) => ({ index: u.edit_index, op: u.op, find: u.find })),
              },
            },
          );
          return { status: err.status, headers: {}, body: err.toBody() };
        }
        const { body } = outcome;
        if (wantsPdf && (result.changes.length > 0 || result.removed.length > 0)) {
          return {
            status: 200,
            headers: {
              'content-type': 'application/pdf',
              'x-edit-status': body.status,
              'x-pages-billed': String(outcome.pagesBilled),
            },
            body: Buffer.from(result.pdf.buffer, result.pdf.byteOffset, result.pdf.byteLength),
          };
        }
        return { status: 200, headers: {}, body };
      },
    );
    reply.code(answer.status).headers(answer.headers);
    return reply.send(answer.body);
  });
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { quotaCheck } from '../billing/meter.js';
import { PLANS, type Plan } from '../billing/plans.js';
import { billingSubject } from '../billing/subject.js';
import { parseCsvRecords } from '../domain/batch-csv.js';
import { fillEdits, placeholdersOf } from '../domain/batch-placeholders.js';
import { openSource } from '../domain/document.js';
import { checkOptions, toEngineEdits } from '../domain/edit-request.js';
import { hashBody, idempotencyScope, sendAnswer, withIdempotency } from '../domain/idempotency.js';
import { checkWebhookUrl, createJob } from '../domain/jobs.js';
import { ApiError } from '../kernel/api-error.js';
import { precheckUrl, safeFetch } from '../net/safe-fetch.js';
import { BatchBody } from '../schemas/batch.js';
import { IdempotencyHeaders } from '../schemas/common.js';
import { errorResponses } from '../schemas/errors.js';
import { ref } from '../schemas/ref.js';
import { Queued } from '../schemas/results.js';

function tooMany(count: number, plan: Plan): ApiError {
  return new ApiError(
    'too_large',
    `The batch has ${count} records; the ${plan.name} plan allows ${plan.maxBatchRecords} per batch.`,
    { hint: 'Split the records into several batches, or move to a plan with larger batches.' },
  );
}

/** `records_url`: a CSV fetched like a source URL (SSRF-safe, capped); 502 when the fetch fails. */
async function fetchRecords(fastify: FastifyInstance, url: string, plan: Plan) {
  const { config } = fastify;
  const fetched = await safeFetch(url, {
    maxBytes: config.jobs.csvMaxBytes,
    timeoutMs: config.fetch.timeoutMs,
    maxRedirects: config.fetch.maxRedirects,
    allowPrivate: config.allowPrivateUrls,
  });
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(fetched.bytes);
  } catch {
    throw new ApiError('invalid_request', 'records_url: the CSV is not UTF-8 text.');
  }
  const records = parseCsvRecords(text, plan.maxBatchRecords);
  if (records.length > plan.maxBatchRecords) throw tooMany(records.length, plan);
  return records;
}

/** POST /v1/batch: the template edited once per record, as a job (202); one output per record. */
export default async function batchRoutes(app: FastifyInstance): Promise<void> {
  const fastify = app.withTypeProvider<TypeBoxTypeProvider>();
  fastify.post(
    '/v1/batch',
    {
      schema: {
        summary: 'Batch edit',
        description:
          'The template edited once per record, as a job. `records` (inline objects) or `records_url` ' +
          '(a CSV with a header row naming the placeholders, fetched like source.url). `{name}` in find, ' +
          'replace, text and form values takes the record value; a record without a value for a ' +
          'placeholder fails on its own (records[].error), the batch goes on. Records per batch: free 50, ' +
          'starter 1,000, growth 10,000, scale 50,000 (413 over it). Quota is checked against every page ' +
          'of every record, five each with `options.ocr` (402 refuses the whole batch); the batch is billed ' +
          'once, for the pages its records touched (an OCR page counts five). `options.webhook_url` receives `job.done`.',
        tags: ['edit'],
        headers: IdempotencyHeaders,
        body: ref(BatchBody),
        response: {
          202: ref(Queued, { description: 'Queued; one output per record.' }),
          ...errorResponses(400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 502, 504),
        },
      },
      onRequest: [fastify.requireKey, fastify.rateLimit],
    },
    async (request, reply) => {
      const principal = request.principal!;
      const body = request.body;
      const plan = PLANS[principal.plan];
      const { config, db } = fastify;
      if ((body.records === undefined) === (body.records_url === undefined)) {
        throw new ApiError('invalid_request', 'A batch needs exactly one of "records" or "records_url".');
      }
      checkOptions(body.options);
      if (body.options?.dry_run)
        throw new ApiError(
          'invalid_request',
          'options.dry_run is for POST /v1/edit; a batch always saves its outputs.',
          {
            hint: 'Try the edits on the template with POST /v1/edit and options.dry_run first.',
          },
        );
      // Every URL of the request is checked before any of them is fetched.
      checkWebhookUrl(body.options?.webhook_url, config.allowPrivateUrls);
      if (body.records_url !== undefined)
        precheckUrl('records_url', body.records_url, config.allowPrivateUrls);
      if (body.records && body.records.length > plan.maxBatchRecords)
        throw tooMany(body.records.length, plan);
      const records = body.records ?? (await fetchRecords(fastify, body.records_url!, plan));
      if (records.length === 0) throw new ApiError('invalid_request', 'The batch has no records.');
      const doc = await openSource(fastify, principal, body.template);
      if (doc.info.signatures.length > 0 && !body.options?.break_signature) {
        throw new ApiError(
          'signed_document',
          'The template carries a digital signature that an edit would break.',
        );
      }
      // The edits as written must be valid once filled; a stand-in value per placeholder
      // finds mistakes of shape now (a record's own values can still fail that record).
      const standIn = Object.fromEntries(placeholdersOf(body.edits).map((n) => [n, 'x']));
      toEngineEdits(fillEdits(body.edits, standIn), doc.info.pageCount);
      const subject = billingSubject(principal, request.ip);
      const answer = await withIdempotency(
        {
          db,
          scope: idempotencyScope(principal, request.ip),
          route: 'POST /v1/batch',
          key: request.headers['idempotency-key'],
          bodyHash: hashBody(body),
          leaseMs: 2 * config.syncTimeoutMs,
          now: config.now,
        },
        async () => {
          // The whole batch is refused when its worst case (every page of every record,
          // each counting five with OCR) is more than remains: never half a batch.
          const perRecord = doc.info.pageCount * (body.options?.ocr ? 5 : 1);
          await quotaCheck(db, subject, perRecord * records.length, config.now());
          const job = await createJob(fastify, {
            owner: { accountId: principal.accountId, mode: principal.mode },
            plan: principal.plan,
            kind: 'batch',
            pdf: doc.bytes,
            password: doc.password,
            pageCount: doc.info.pageCount,
            sourceFileId: body.template.file_id,
            edits: body.edits,
            options: body.options,
            records,
          });
          await fastify.jobs.submit(job);
          return { status: 202, headers: {}, body: { job_id: job.id } };
        },
      );
      return sendAnswer(reply, answer);
    },
  );
}

import type { FastifyInstance } from 'fastify';
import { quotaCheck } from '../billing/meter.js';
import { PLANS, type Plan } from '../billing/plans.js';
import { billingSubject } from '../billing/subject.js';
import { ApiError } from '../domain/api-error.js';
import { parseCsvRecords } from '../domain/batch-csv.js';
import { fillEdits, placeholdersOf } from '../domain/batch-placeholders.js';
import { openSource } from '../domain/document.js';
import { checkOptions, toEngineEdits } from '../domain/edit-request.js';
import { hashBody, idempotencyScope, withIdempotency } from '../domain/idempotency.js';
import { checkWebhookUrl, createJob } from '../domain/jobs.js';
import { safeFetch } from '../net/safe-fetch.js';
import { BatchBody } from '../schemas/batch.js';

function tooMany(count: number, plan: Plan): ApiError {
  return new ApiError(
    'too_large',
    `The batch has ${count} records; the ${plan.name} plan allows ${plan.maxBatchRecords} per batch.`,
    { hint: 'Split the records into several batches, or move to a plan with larger batches.' },
  );
}

/** `records_url`: a CSV fetched like a source URL (SSRF-safe, capped); 502 when the fetch fails. */
async function fetchRecords(fastify: FastifyInstance, url: string, plan: Plan) {
  if (!URL.canParse(url)) throw new ApiError('invalid_request', 'records_url is not an absolute URL.');
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
export default async function batchRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.post<{ Body: BatchBody }>(
    '/v1/batch',
    { schema: { body: BatchBody }, onRequest: [fastify.requireKey, fastify.rateLimit] },
    async (request, reply) => {
      const principal = request.principal!;
      const body = request.body;
      const plan = PLANS[principal.plan];
      const { config, db } = fastify;
      if ((body.records === undefined) === (body.records_url === undefined)) {
        throw new ApiError('invalid_request', 'A batch needs exactly one of "records" or "records_url".');
      }
      checkOptions(body.options);
      checkWebhookUrl(body.options?.webhook_url);
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
          // The whole batch is refused when its worst case (every page of every record)
          // is more than remains: never half a batch.
          await quotaCheck(db, subject, doc.info.pageCount * records.length, config.now());
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
      reply.code(answer.status).headers(answer.headers);
      return reply.send(answer.body);
    },
  );
}

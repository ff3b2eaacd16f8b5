import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { findJob, JOB_STATUSES, jobBody, listJobs } from '../domain/jobs.js';
import { ApiError } from '../kernel/api-error.js';
import { errorResponses } from '../schemas/errors.js';
import { JobDetail, JobList, JobListQuery, JobParams } from '../schemas/jobs.js';
import { ref } from '../schemas/ref.js';
import type { JobStatus } from '../store/jobs-schema.js';

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/** GET /v1/jobs and GET /v1/jobs/{job_id}: the caller's jobs (account and key mode) only. */
export default async function jobRoutes(app: FastifyInstance): Promise<void> {
  const fastify = app.withTypeProvider<TypeBoxTypeProvider>();
  fastify.get(
    '/v1/jobs',
    {
      schema: {
        summary: 'List jobs',
        description: "The calling key's jobs (its account and mode), newest first. Jobs are kept 30 days.",
        tags: ['jobs'],
        querystring: JobListQuery,
        response: { 200: ref(JobList, { description: 'Newest first.' }), ...errorResponses(400, 401, 429) },
      },
      onRequest: [fastify.requireKey, fastify.rateLimit],
    },
    async (request) => {
      const principal = request.principal!;
      const q = request.query;
      let since: number | undefined;
      if (q.since !== undefined) {
        since = ISO_DATE_TIME.test(q.since) ? Date.parse(q.since) : Number.NaN;
        if (Number.isNaN(since))
          throw new ApiError(
            'invalid_request',
            'since must be an ISO 8601 date-time such as 2026-11-22T10:00:00Z.',
          );
      }
      if (q.status !== undefined && !JOB_STATUSES.includes(q.status as JobStatus)) {
        throw new ApiError('invalid_request', `status must be one of ${JOB_STATUSES.join(', ')}.`);
      }
      return listJobs(
        fastify.db,
        { accountId: principal.accountId, mode: principal.mode },
        {
          ...(since !== undefined ? { since } : {}),
          ...(q.status !== undefined ? { status: q.status as JobStatus } : {}),
          ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
          limit: q.limit ?? 50,
        },
        fastify.config.now(),
      );
    },
  );

  fastify.get(
    '/v1/jobs/:job_id',
    {
      schema: {
        summary: 'Get a job',
        tags: ['jobs'],
        params: JobParams,
        response: {
          200: ref(JobDetail, {
            description:
              'Running: status and progress; finished: the edit result (plus records for a batch).',
          }),
          ...errorResponses(401, 404, 429),
        },
      },
      onRequest: [fastify.requireKey, fastify.rateLimit],
    },
    async (request) => {
      const principal = request.principal!;
      const row = await findJob(
        fastify.db,
        { accountId: principal.accountId, mode: principal.mode },
        request.params.job_id,
        fastify.config.now(),
      );
      if (!row) throw new ApiError('not_found', `No job "${request.params.job_id}" for this key.`);
      return jobBody(fastify.db, row);
    },
  );
}

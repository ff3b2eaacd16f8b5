import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../domain/api-error.js';
import { findJob, JOB_STATUSES, jobBody, listJobs } from '../domain/jobs.js';
import type { JobStatus } from '../store/jobs-schema.js';

const ListQuery = Type.Object(
  {
    since: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    status: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  },
  { additionalProperties: false },
);
type ListQuery = Static<typeof ListQuery>;

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/** GET /v1/jobs and GET /v1/jobs/{job_id}: the caller's jobs (account and key mode) only. */
export default async function jobRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.get<{ Querystring: ListQuery }>(
    '/v1/jobs',
    { schema: { querystring: ListQuery }, onRequest: [fastify.requireKey, fastify.rateLimit] },
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

  fastify.get<{ Params: { job_id: string } }>(
    '/v1/jobs/:job_id',
    { onRequest: [fastify.requireKey, fastify.rateLimit] },
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

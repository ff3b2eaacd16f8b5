import type { FastifyInstance } from 'fastify';
import { usageOf } from '../billing/meter.js';
import { PLANS } from '../billing/plans.js';
import { allowanceOf, billingSubject } from '../billing/subject.js';
import { watermarkOffAllowed } from '../domain/run-edit.js';
import { LimitsResponse, UsageResponse } from '../schemas/account.js';
import { errorResponses } from '../schemas/errors.js';
import { ref } from '../schemas/ref.js';
import { isoSeconds } from '../schemas/time.js';

/** GET /v1/limits and GET /v1/usage: what the calling key may do and has used. */
export default async function accountRoutes(fastify: FastifyInstance): Promise<void> {
  const rl = [fastify.requireKey, fastify.rateLimit];

  fastify.get(
    '/v1/limits',
    {
      onRequest: rl,
      schema: {
        summary: 'Plan limits',
        tags: ['account'],
        response: { 200: ref(LimitsResponse), ...errorResponses(401, 429) },
      },
    },
    async (request) => {
      const p = request.principal!;
      const plan = PLANS[p.plan];
      // The plan allows it, and the account accepted the current terms (SPEC rule 12).
      const offAllowed = await watermarkOffAllowed(fastify, billingSubject(p, request.ip));
      return {
        plan: plan.name,
        mode: p.mode,
        monthly_pages: allowanceOf(billingSubject(p, request.ip)),
        requests_per_minute: plan.requestsPerMinute,
        concurrency: plan.concurrency,
        max_file_bytes: plan.maxFileBytes,
        max_pages: plan.maxPages,
        sync_page_limit: plan.syncPageLimit,
        max_batch_records: plan.maxBatchRecords,
        watermark_off_allowed: offAllowed,
      };
    },
  );

  fastify.get(
    '/v1/usage',
    {
      onRequest: rl,
      schema: {
        summary: 'Usage of the period',
        description:
          'Calendar month (UTC). Allowance first, then credit-pack pages; an OCR page counts five.',
        tags: ['account'],
        response: { 200: ref(UsageResponse), ...errorResponses(401, 429) },
      },
    },
    async (request) => {
      const subject = billingSubject(request.principal, request.ip);
      const u = await usageOf(fastify.db, subject, fastify.config.now());
      return {
        period_start: isoSeconds(u.period.start),
        period_end: isoSeconds(u.period.end),
        pages_used: u.pagesUsed,
        allowance: u.allowance,
        credit_pages: u.creditPages,
        remaining: u.remaining,
        overage_pages: u.overagePages,
      };
    },
  );
}

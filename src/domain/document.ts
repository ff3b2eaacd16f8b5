import type { FastifyInstance } from 'fastify';
import { engineBudgetMs, PLANS } from '../billing/plans.js';
import type { DocInfo } from '../engine/types.js';
import { ApiError } from '../kernel/api-error.js';
import type { Principal } from '../kernel/principal.js';
import { resolveSource, type SourceInput } from './source.js';

export interface OpenedDocument {
  bytes: Buffer;
  password: string | undefined;
  info: DocInfo;
}

/**
 * Fetches a request's source and opens it in the engine, enforcing the plan's page limit
 * (the size limit is enforced while the bytes arrive). Encryption and damage surface here
 * as document_encrypted / document_unsupported.
 */
export async function openSource(
  fastify: FastifyInstance,
  principal: Principal | undefined,
  source: SourceInput,
): Promise<OpenedDocument> {
  const { bytes, password } = await resolveSource(fastify, principal, source);
  const plan = principal ? PLANS[principal.plan] : PLANS.keyless;
  const info = await fastify.engine.open(
    bytes,
    password,
    engineBudgetMs(plan.name, fastify.config.syncTimeoutMs),
    plan.engineLimits,
  );
  if (info.pageCount > plan.maxPages) {
    throw new ApiError(
      'too_large',
      `The document has ${info.pageCount} pages; the ${plan.name} plan allows ${plan.maxPages}.`,
    );
  }
  return { bytes, password, info };
}

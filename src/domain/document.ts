import type { FastifyInstance } from 'fastify';
import type { DocInfo } from '../../native/index.js';
import { engineBudgetMs, PLANS } from '../billing/plans.js';
import { DocInfoCache } from '../engine/doc-info-cache.js';
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
  const { bytes, password, sha256 } = await resolveSource(fastify, principal, source);
  return { bytes, password, info: await openDocument(fastify, principal, bytes, password, sha256) };
}

/** One cache of successful opens per engine (a test app has its own). */
const openedBy = new WeakMap<object, DocInfoCache>();

/**
 * The engine's open of a request's document under the caller's plan (budget scan, PDFium
 * load), enforcing the plan's page limit. Opens are kept by content, password and limits
 * (DocInfoCache), so editing an uploaded file again, or sending the same template, does
 * not open it in an engine process again before the edit (issue 18 item 1).
 */
export async function openDocument(
  fastify: Pick<FastifyInstance, 'engine' | 'config'>,
  principal: Principal | undefined,
  bytes: Buffer,
  password: string | undefined,
  /** SHA-256 (hex) of `bytes` when known (a stored file's): they are not hashed again. */
  sha256?: string,
): Promise<DocInfo> {
  const plan = principal ? PLANS[principal.plan] : PLANS.keyless;
  let cache = openedBy.get(fastify.engine);
  if (!cache) {
    cache = new DocInfoCache();
    openedBy.set(fastify.engine, cache);
  }
  const key = DocInfoCache.keyOf(sha256 ?? bytes, password, plan.engineLimits);
  let info = cache.get(key);
  if (!info) {
    info = await fastify.engine.open(
      bytes,
      password,
      engineBudgetMs(plan.name, fastify.config.syncTimeoutMs),
      plan.engineLimits,
    );
    cache.put(key, info);
  }
  if (info.pageCount > plan.maxPages) {
    throw new ApiError(
      'too_large',
      `The document has ${info.pageCount} pages; the ${plan.name} plan allows ${plan.maxPages}.`,
    );
  }
  return info;
}

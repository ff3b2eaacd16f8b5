import { buffer } from 'node:stream/consumers';
import type { FastifyInstance } from 'fastify';
import { PLANS } from '../billing/plans.js';
import { ApiError } from '../kernel/api-error.js';
import type { Principal } from '../kernel/principal.js';
import { precheckUrl, safeFetch } from '../net/safe-fetch.js';
import { findFile } from './files.js';

/** `source` of a request (SPEC "Source", API-DECISIONS "Source"). */
export interface SourceInput {
  file_id?: string;
  url?: string;
  password?: string;
}

export interface ResolvedSource {
  bytes: Buffer;
  password?: string;
}

/**
 * The bytes a request's `source` names. A `file_id` must be the caller's own (same
 * account and key mode), stored and unexpired, else 404 not_found; a `url` is fetched with
 * safeFetch, 502 upstream_error when that fails and 413 too_large over the plan's size.
 */
export async function resolveSource(
  fastify: FastifyInstance,
  principal: Principal | undefined,
  source: SourceInput,
): Promise<ResolvedSource> {
  const hasFile = typeof source?.file_id === 'string';
  const hasUrl = typeof source?.url === 'string';
  if (hasFile === hasUrl) {
    throw new ApiError('invalid_request', 'source needs exactly one of "file_id" or "url".', {
      hint: 'Send {"file_id": "file_…"} from POST /v1/files, or {"url": "https://…"}.',
    });
  }
  if (source.password !== undefined && typeof source.password !== 'string') {
    throw new ApiError('invalid_request', 'source.password must be a string.');
  }
  const password = source.password;
  if (hasFile && !principal) {
    throw new ApiError('not_found', `No stored file "${source.file_id}" for keyless use.`, {
      hint: 'Uploaded files belong to an API key: send Authorization: Bearer <key>, or use source.url.',
    });
  }
  const bytes = hasFile
    ? await fromFile(fastify, principal!, source.file_id!)
    : await fromUrl(fastify, planLimits(principal), source.url!);
  return password === undefined ? { bytes } : { bytes, password };
}

async function fromFile(fastify: FastifyInstance, principal: Principal, fileId: string): Promise<Buffer> {
  const owner = { accountId: principal.accountId, mode: principal.mode };
  const file = await findFile(fastify.db, owner, fileId, fastify.config.now());
  const blob =
    file?.status === 'stored' && file.blob_key ? await fastify.blobs.get(file.blob_key) : undefined;
  if (!blob) {
    // One answer for unknown, foreign, other-mode, expired, deleted and never-uploaded files:
    // telling them apart would reveal which ids exist.
    throw new ApiError('not_found', `No stored file "${fileId}" for this key.`, {
      hint: 'Reserve with POST /v1/files and PUT the bytes first; files expire after 24 hours and are per key mode.',
    });
  }
  const max = PLANS[principal.plan].maxFileBytes;
  if (blob.size > max) {
    // A file stored under a larger plan, used after a downgrade.
    blob.stream.destroy();
    throw new ApiError(
      'too_large',
      `The file is ${blob.size} bytes; the ${principal.plan} plan allows ${max}.`,
    );
  }
  return buffer(blob.stream);
}

/** Limits of the caller: its key's plan, or the keyless tier's. */
function planLimits(principal: Principal | undefined) {
  return principal ? PLANS[principal.plan] : PLANS.keyless;
}

async function fromUrl(
  fastify: FastifyInstance,
  plan: (typeof PLANS)[keyof typeof PLANS],
  url: string,
): Promise<Buffer> {
  const { fetch, allowPrivateUrls } = fastify.config;
  // What can be refused without a network call (no URL at all, another scheme, userinfo,
  // a private address literal, a local name) is a malformed request (400); 502 is for
  // fetches that fail, including a name that resolves to a refused address.
  precheckUrl('source.url', url, allowPrivateUrls);
  const planMax = plan.maxFileBytes;
  // Over the plan's size is the caller's 413; over the service's own fetch cap (when that is
  // the smaller one) is a fetch failure, 502.
  const planBinds = planMax <= fetch.maxBytes;
  const result = await safeFetch(url, {
    maxBytes: planBinds ? planMax : fetch.maxBytes,
    timeoutMs: fetch.timeoutMs,
    maxRedirects: fetch.maxRedirects,
    allowPrivate: allowPrivateUrls,
    tooLargeCode: planBinds ? 'too_large' : 'upstream_error',
  });
  return result.bytes;
}

import type { FastifyInstance } from 'fastify';
import { PLANS } from '../billing/plans.js';
import { ApiError } from '../kernel/api-error.js';
import type { Principal } from '../kernel/principal.js';
import { precheckUrl, safeFetch } from '../net/safe-fetch.js';
import { readBlobBytes } from '../store/blob-bytes.js';
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
  /** SHA-256 (hex) of the bytes when already known (a stored file's row has it). */
  sha256?: string;
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
  const read = hasFile
    ? await fromFile(fastify, principal!, source.file_id!)
    : { bytes: await fromUrl(fastify, planLimits(principal), source.url!) };
  return password === undefined ? read : { ...read, password };
}

async function fromFile(
  fastify: FastifyInstance,
  principal: Principal,
  fileId: string,
): Promise<{ bytes: Buffer; sha256?: string }> {
  const owner = { accountId: principal.accountId, mode: principal.mode };
  const file = await findFile(fastify.db, owner, fileId, fastify.config.now());
  // One answer for unknown, foreign, other-mode, expired, deleted and never-uploaded files:
  // telling them apart would reveal which ids exist.
  const notFound = () =>
    new ApiError('not_found', `No stored file "${fileId}" for this key.`, {
      hint: 'Reserve with POST /v1/files and PUT the bytes first; files expire after 24 hours and are per key mode.',
    });
  if (file?.status !== 'stored' || !file.blob_key) throw notFound();
  const max = PLANS[principal.plan].maxFileBytes;
  if (file.size !== null && file.size > max) {
    // A file stored under a larger plan, used after a downgrade.
    throw new ApiError(
      'too_large',
      `The file is ${file.size} bytes; the ${principal.plan} plan allows ${max}.`,
    );
  }
  // Stored files never change, so an uploaded file edited call after call is read once.
  const bytes = await readBlobBytes(fastify.blobs, file.blob_key);
  if (!bytes) throw notFound();
  if (bytes.length > max) {
    throw new ApiError(
      'too_large',
      `The file is ${bytes.length} bytes; the ${principal.plan} plan allows ${max}.`,
    );
  }
  return file.sha256 ? { bytes, sha256: file.sha256 } : { bytes };
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

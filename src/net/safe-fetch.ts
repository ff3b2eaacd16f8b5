import dns from 'node:dns';
import { Agent, request } from 'undici';
import { ApiError } from '../domain/api-error.js';
import type { ErrorCode } from '../domain/error-codes.js';
import { isForbiddenAddress, isIpLiteral } from './address-policy.js';

export { isForbiddenAddress } from './address-policy.js';

export interface SafeFetchOptions {
  maxBytes: number;
  /** Budget of the whole exchange: every hop, headers and body. */
  timeoutMs: number;
  maxRedirects: number;
  /** Admit loopback/private addresses (ALLOW_PRIVATE_URLS); never changes the scheme rules. */
  allowPrivate: boolean;
  /** Code for a body over `maxBytes`; a caller enforcing a plan limit passes 'too_large'. */
  tooLargeCode?: ErrorCode;
  /**
   * Replaces the address policy (true = refuse). For tests that need one loopback hop
   * admitted and the next refused; production code leaves it unset.
   */
  isForbidden?: (ip: string) => boolean;
}

export interface SafeFetchResult {
  bytes: Buffer;
  contentType: string | undefined;
  finalUrl: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Marks the refusal raised inside the connect-time lookup, so it can be told from I/O errors. */
export class ForbiddenAddressError extends Error {
  override readonly name = 'ForbiddenAddressError';
}

function upstream(message: string, cause?: unknown): ApiError {
  return new ApiError('upstream_error', message, { cause });
}

/**
 * DNS resolution done by us, inside the socket's connect: the addresses we check are the
 * very addresses the socket connects to, so a name cannot resolve to a public address for
 * the check and to 127.0.0.1 for the connection (DNS rebinding, no TOCTOU gap).
 * Every resolved address must pass, not just the first: Happy Eyeballs may try any of them.
 */
export function guardedLookup(forbidden: (ip: string) => boolean) {
  return (
    hostname: string,
    options: dns.LookupOptions,
    callback: (err: Error | null, address: string | dns.LookupAddress[], family?: number) => void,
  ): void => {
    dns.lookup(
      hostname,
      { all: true, family: options.family ?? 0, hints: options.hints },
      (err, addresses) => {
        if (err) return callback(err, []);
        if (addresses.length === 0) return callback(new Error(`no address for ${hostname}`), []);
        if (addresses.some((a) => forbidden(a.address))) {
          return callback(new ForbiddenAddressError(hostname), []);
        }
        if (options.all) return callback(null, addresses);
        const first = addresses[0]!;
        callback(null, first.address, first.family);
      },
    );
  };
}

/** Scheme, userinfo and IP-literal checks of one hop, before any socket is opened. */
export function checkUrl(raw: string, forbidden: (ip: string) => boolean, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw upstream(
      base ? 'The URL redirected to an invalid Location.' : 'The URL is not a valid absolute URL.',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw upstream(`Only http and https URLs can be fetched, not ${url.protocol.replace(/:$/, '')}.`);
  }
  // Credentials in a URL end up in logs and in Referer-like places; refuse rather than strip.
  if (url.username || url.password) throw upstream('URLs with a user name or password are not fetched.');
  // The WHATWG parser has already normalised 0x7f000001, 2130706433, 0177.0.0.1 to
  // 127.0.0.1, so the literal check sees the address the socket would use. Literal
  // addresses never reach the lookup, hence this check here.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIpLiteral(host) && forbidden(host)) {
    throw upstream('The URL points to a private, loopback or reserved address.');
  }
  return url;
}

/** Drops a body we will not read; undici reports the abort as an error nobody awaits. */
function discard(body: NodeJS.ReadableStream & { destroy(): void }): void {
  body.on('error', () => {});
  body.destroy();
}

function findCause(err: unknown): unknown {
  let e: unknown = err;
  for (let i = 0; i < 5 && e instanceof Error; i++) {
    if (e instanceof ForbiddenAddressError || e instanceof ApiError) return e;
    e = e.cause;
  }
  return err;
}

/** Turns whatever undici threw into an ApiError that says what happened, without internals. */
function describe(err: unknown, timedOut: boolean, timeoutMs: number): ApiError {
  if (timedOut) return upstream(`The URL did not answer completely within ${timeoutMs} ms.`, err);
  const cause = findCause(err);
  if (cause instanceof ApiError) return cause;
  if (cause instanceof ForbiddenAddressError) {
    return upstream('The URL resolves to a private, loopback or reserved address.', err);
  }
  const code = (err as { code?: string })?.code ?? (cause as { code?: string })?.code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return upstream('The URL host name does not resolve.', err);
  if (code === 'ECONNREFUSED') return upstream('The URL host refused the connection.', err);
  return upstream('The URL could not be fetched (connection or protocol error).', err);
}

/**
 * Fetches a public URL safely (SSRF): http/https only, no userinfo, every hop's addresses
 * checked at connect time, redirects followed by hand and re-checked, body capped while
 * streaming, one deadline for everything. Every failure is an `upstream_error` ApiError
 * (or `tooLargeCode` for a body over the cap).
 */
export async function safeFetch(input: string, opts: SafeFetchOptions): Promise<SafeFetchResult> {
  const tooLarge = () =>
    new ApiError(
      opts.tooLargeCode ?? 'upstream_error',
      `The document at the URL is larger than ${opts.maxBytes} bytes.`,
    );
  const forbidden = opts.isForbidden ?? ((ip: string) => isForbiddenAddress(ip, opts.allowPrivate));
  // One agent per call: no pooled socket can outlive the policy it was checked under.
  const agent = new Agent({
    connect: { lookup: guardedLookup(forbidden) as never },
    // 0 also turns keep-alive off: every hop opens (and checks) its own connection.
    pipelining: 0,
  });
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, opts.timeoutMs);
  try {
    let url = checkUrl(input, forbidden);
    for (let hop = 0; ; hop++) {
      const res = await request(url, {
        method: 'GET',
        dispatcher: agent,
        signal: controller.signal,
        headers: { accept: 'application/pdf, */*;q=0.5', 'user-agent': 'pdfedit-fetch/1' },
      });
      if (REDIRECTS.has(res.statusCode)) {
        discard(res.body);
        const location = res.headers.location;
        const target = Array.isArray(location) ? location[0] : location;
        if (!target) throw upstream(`The URL answered a redirect (${res.statusCode}) without a Location.`);
        if (hop >= opts.maxRedirects)
          throw upstream(`The URL redirected more than ${opts.maxRedirects} times.`);
        // Relative Locations resolve against the hop that sent them; the result is re-checked.
        url = checkUrl(target, forbidden, url);
        continue;
      }
      if (res.statusCode < 200 || res.statusCode > 299) {
        discard(res.body);
        throw upstream(`The URL answered HTTP ${res.statusCode}.`);
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > opts.maxBytes) {
        discard(res.body);
        throw tooLarge();
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > opts.maxBytes) {
          discard(res.body);
          throw tooLarge();
        }
        chunks.push(chunk as Buffer);
      }
      const type = res.headers['content-type'];
      return {
        bytes: Buffer.concat(chunks, size),
        contentType: Array.isArray(type) ? type[0] : type,
        finalUrl: url.toString(),
      };
    }
  } catch (err) {
    throw describe(err, timedOut, opts.timeoutMs);
  } finally {
    clearTimeout(timer);
    agent.destroy().catch(() => {});
  }
}

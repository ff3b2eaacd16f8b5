import dns from 'node:dns';
import { Agent, request } from 'undici';
import { ApiError } from '../kernel/api-error.js';
import type { ErrorCode } from '../kernel/error-codes.js';
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

/**
 * Host names that only ever name this machine (RFC 6761 `localhost`) or a private network
 * (RFC 6762 `.local`, RFC 8375 `home.arpa`, the private-use `.internal`, where cloud
 * metadata services live). They are judged without DNS, as the address kind they stand
 * for, so the answer does not depend on the resolver of the day.
 */
const LOOPBACK_NAME = /(^|\.)localhost$/i;
const PRIVATE_NAME = /(^|\.)(local|internal|home\.arpa|localdomain)$/i;

/**
 * Why a URL must not be fetched, judged without any network call (scheme, userinfo, an IP
 * literal or a local name the policy refuses), or undefined when it may be tried. The
 * policy is `forbidden`, the same function the connect-time lookup applies.
 */
export function urlRefusal(url: URL, forbidden: (ip: string) => boolean): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `Only http and https URLs can be fetched, not ${url.protocol.replace(/:$/, '')}.`;
  }
  // Credentials in a URL end up in logs and in Referer-like places; refuse rather than strip.
  if (url.username || url.password) return 'URLs with a user name or password are not fetched.';
  // The WHATWG parser has already normalised 0x7f000001, 2130706433, 0177.0.0.1 and 127.1
  // to 127.0.0.1, so the literal check sees the address the socket would use. Literal
  // addresses never reach the lookup, hence this check here.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIpLiteral(host)) {
    return forbidden(host) ? 'The URL points to a private, loopback or reserved address.' : undefined;
  }
  const name = host.replace(/\.+$/, '');
  if (
    (LOOPBACK_NAME.test(name) && forbidden('127.0.0.1')) ||
    (PRIVATE_NAME.test(name) && forbidden('10.0.0.1'))
  ) {
    return 'The URL names a local or private host.';
  }
  return undefined;
}

/** The checks of urlRefusal for one hop, before any socket is opened: 502 when refused. */
export function checkUrl(raw: string, forbidden: (ip: string) => boolean, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw upstream(
      base ? 'The URL redirected to an invalid Location.' : 'The URL is not a valid absolute URL.',
    );
  }
  const refusal = urlRefusal(url, forbidden);
  if (refusal) throw upstream(refusal);
  return url;
}

/**
 * The request-time check of a URL the service will fetch or call later (`source.url`,
 * `records_url`, `options.webhook_url`): what can be refused without a network call is a
 * 400 naming the member, before any work. What only DNS can tell is refused at connect
 * time by the same policy (guardedLookup), which is also what stops DNS rebinding.
 */
export function precheckUrl(field: string, raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError('invalid_request', `${field} is not an absolute URL.`, {
      hint: 'Send a complete address such as https://example.com/document.pdf.',
    });
  }
  const refusal = urlRefusal(url, (ip) => isForbiddenAddress(ip, allowPrivate));
  if (refusal) {
    throw new ApiError('invalid_request', `${field}: ${refusal}`, {
      hint: 'The service only reaches public http(s) addresses, without credentials in the URL.',
    });
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

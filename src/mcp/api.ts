/**
 * A small client of the public HTTP API, used by the MCP server and the user CLI. It talks
 * to any deployment by base URL and key; the service's own /mcp route hands it a `fetch`
 * that goes through Fastify's inject instead of the network.
 */

/** An error answer of the API (its envelope), or a failure to reach it (`status` 0). */
export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint: string,
    /** The whole error body (edit_failed adds `failed` and `unmatched`). */
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

export interface ApiOptions {
  baseUrl: string;
  key?: string;
  fetch?: Fetch;
  /** Called with (bytes so far, total or undefined) while a body is sent or received. */
  onProgress?: (done: number, total: number | undefined, what: 'upload' | 'download') => void;
}

export interface JsonAnswer<T> {
  status: number;
  body: T;
}

export class PdfeditApi {
  readonly baseUrl: string;
  private readonly key: string | undefined;
  private readonly fetchImpl: Fetch;
  onProgress: ApiOptions['onProgress'];

  constructor(opts: ApiOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.key = opts.key;
    this.fetchImpl = opts.fetch ?? ((url, init) => fetch(url, init));
    this.onProgress = opts.onProgress;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.key ? { authorization: `Bearer ${this.key}` } : {}), ...extra };
  }

  private async send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.fetchImpl(url, init);
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new ApiCallError(
        0,
        'network_error',
        `Could not reach ${this.baseUrl}: ${cause?.code ?? cause?.message ?? (err as Error).message}`,
        'Check the base URL (PDFEDIT_BASE_URL or `pdfedit login --base-url`) and that the service is running.',
      );
    }
  }

  private async failure(res: Response): Promise<never> {
    const text = await res.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // not JSON: a proxy's page; described below by status
    }
    const e = body.error as { code?: string; message?: string; hint?: string } | undefined;
    throw new ApiCallError(
      res.status,
      e?.code ?? `http_${res.status}`,
      e?.message ?? `The service answered HTTP ${res.status}.`,
      e?.hint ?? 'Check the base URL: this does not look like a pdfedit service.',
      body,
    );
  }

  /** A JSON call; 2xx answers come back, error envelopes are thrown as ApiCallError. */
  async json<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<JsonAnswer<T>> {
    const res = await this.send(`${this.baseUrl}${path}`, {
      method,
      headers: this.headers(
        body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      ),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) return this.failure(res);
    return { status: res.status, body: (res.status === 204 ? {} : await res.json()) as T };
  }

  /** POST /v1/preview: the PNG bytes. */
  async preview(body: unknown): Promise<Buffer> {
    const res = await this.send(`${this.baseUrl}/v1/preview`, {
      method: 'POST',
      headers: this.headers({ 'content-type': 'application/json', accept: 'image/png' }),
      body: JSON.stringify(body),
    });
    if (!res.ok) return this.failure(res);
    return Buffer.from(await res.arrayBuffer());
  }

  /** Reserves a file, PUTs `bytes` to its upload link, returns the file_id. */
  async upload(bytes: Buffer): Promise<string> {
    const { body: r } = await this.json<{
      file_id: string;
      upload_url: string;
      headers: Record<string, string>;
    }>('POST', '/v1/files', {});
    const total = bytes.length;
    const progress = this.onProgress;
    let sent = 0;
    const chunk = 256 * 1024;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) {
          controller.close();
          return;
        }
        const part = bytes.subarray(sent, Math.min(total, sent + chunk));
        sent += part.length;
        controller.enqueue(part);
        progress?.(sent, total, 'upload');
      },
    });
    const res = await this.send(this.sameOrigin(r.upload_url), {
      method: 'PUT',
      headers: { ...r.headers, 'content-length': String(total) },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    if (!res.ok) return this.failure(res);
    return r.file_id;
  }

  /** Downloads a signed link the API gave (an output, a preview); only this service's links. */
  async download(url: string): Promise<Buffer> {
    const res = await this.send(this.sameOrigin(url), { method: 'GET' });
    if (!res.ok) return this.failure(res);
    const total = Number(res.headers.get('content-length')) || undefined;
    if (!res.body) return Buffer.alloc(0);
    const parts: Buffer[] = [];
    let done = 0;
    for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
      parts.push(Buffer.from(part));
      done += part.length;
      this.onProgress?.(done, total, 'download');
    }
    return Buffer.concat(parts);
  }

  /**
   * A link is followed only when it is a file link of this service (an output, preview or
   * upload link it handed out, sent without the key): the tools never fetch arbitrary
   * addresses, nor other routes of the API, on an agent's say-so.
   */
  sameOrigin(link: string): string {
    let u: URL;
    try {
      u = new URL(link, `${this.baseUrl}/`);
    } catch {
      throw new ApiCallError(
        400,
        'invalid_request',
        `"${link}" is not a URL.`,
        'Pass a link the API returned.',
      );
    }
    const base = new URL(`${this.baseUrl}/`);
    // A service on this machine answers to every loopback name alike: its links may say
    // 127.0.0.1 (its PUBLIC_URL default) where the client was given localhost. Such a link
    // is followed at the client's own origin.
    if (
      u.origin !== base.origin &&
      loopback(u) &&
      loopback(base) &&
      u.port === base.port &&
      u.protocol === base.protocol
    ) {
      u = new URL(`${u.pathname}${u.search}`, base.origin);
    }
    if (u.origin !== base.origin || !u.pathname.startsWith(`${base.pathname}v1/files/`)) {
      throw new ApiCallError(
        400,
        'invalid_request',
        `The link ${u.origin}${u.pathname} is not a file link of this service (${base.origin}${base.pathname}v1/files/…).`,
        'Pass an output or preview link exactly as the API returned it.',
      );
    }
    return u.href;
  }
}

/** Whether a URL names this machine by a loopback name or address. */
function loopback(u: URL): boolean {
  return ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
}

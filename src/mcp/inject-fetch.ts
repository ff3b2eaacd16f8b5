import type { FastifyInstance } from 'fastify';
import type { Fetch } from './api.js';

async function bodyBytes(body: RequestInit['body']): Promise<string | Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof ReadableStream) {
    const parts: Buffer[] = [];
    for await (const part of body as unknown as AsyncIterable<Uint8Array>) parts.push(Buffer.from(part));
    return Buffer.concat(parts);
  }
  if (body instanceof Uint8Array) return Buffer.from(body);
  throw new Error('inject fetch: unsupported body');
}

/**
 * A `fetch` that sends the request into the service itself (Fastify inject): the /mcp
 * route's tools call the public API in-process, through the same routes, authentication,
 * rate limits and metering as any client. Only the path and query of the URL are used, so
 * a link can never make the server fetch another host.
 */
export function injectFetch(fastify: FastifyInstance): Fetch {
  return async (url, init) => {
    const u = new URL(url);
    const res = await fastify.inject({
      method: (init.method ?? 'GET') as 'GET',
      url: `${u.pathname}${u.search}`,
      headers: (init.headers ?? {}) as Record<string, string>,
      payload: await bodyBytes(init.body),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, String(v));
    }
    const empty = res.statusCode === 204 || res.statusCode === 304;
    return new Response(empty ? null : new Uint8Array(res.rawPayload), { status: res.statusCode, headers });
  };
}

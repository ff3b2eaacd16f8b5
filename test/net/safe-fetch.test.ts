import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/kernel/api-error.js';
import { isForbiddenAddress, type SafeFetchOptions, safeFetch } from '../../src/net/safe-fetch.js';

const PDF = Buffer.from('%PDF-1.7\n% test body\n%%EOF\n');

/** A local server with one route per scenario; it never leaves 127.0.0.1. */
let server: http.Server;
let base: string;
let port: number;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/doc.pdf':
        res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': PDF.length });
        return res.end(PDF);
      case '/big-declared':
        res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': 10_000 });
        return res.end(Buffer.alloc(10_000));
      case '/big-chunked':
        // No Content-Length: the cap must hold while streaming.
        res.writeHead(200, { 'content-type': 'application/pdf' });
        for (let i = 0; i < 10; i++) res.write(Buffer.alloc(1000));
        return res.end();
      case '/slow':
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.write('%PDF');
        return void setTimeout(() => res.end(), 5_000).unref();
      case '/loop':
        res.writeHead(302, { location: '/loop' });
        return res.end();
      case '/relative':
        res.writeHead(301, { location: 'doc.pdf' });
        return res.end();
      case '/to':
        res.writeHead(307, { location: url.searchParams.get('u') ?? '/' });
        return res.end();
      case '/missing':
        res.writeHead(404);
        return res.end();
    }
    res.writeHead(500);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const OPEN: SafeFetchOptions = { maxBytes: 5_000, timeoutMs: 2_000, maxRedirects: 5, allowPrivate: true };
const CLOSED: SafeFetchOptions = { ...OPEN, allowPrivate: false };

async function refusal(url: string, opts: SafeFetchOptions): Promise<ApiError> {
  const err = await safeFetch(url, opts).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('safeFetch', () => {
  it('refuses a loopback server without allowPrivate and serves it with it', async () => {
    const err = await refusal(`${base}/doc.pdf`, CLOSED);
    expect(err.code).toBe('upstream_error');
    expect(err.message).toMatch(/private, loopback or reserved/);
    const ok = await safeFetch(`${base}/doc.pdf`, OPEN);
    expect(ok.bytes.equals(PDF)).toBe(true);
    expect(ok.contentType).toBe('application/pdf');
    expect(ok.finalUrl).toBe(`${base}/doc.pdf`);
  });

  it('refuses localhost by its name, before any lookup (names resolved by DNS: test/net/ssrf.test.ts)', async () => {
    const err = await refusal(`http://localhost:${port}/doc.pdf`, CLOSED);
    expect(err.message).toMatch(/names a local or private host/);
    // The same name passes through our lookup when private addresses are admitted.
    const ok = await safeFetch(`http://localhost:${port}/doc.pdf`, OPEN);
    expect(ok.bytes.equals(PDF)).toBe(true);
  });

  it('refuses a redirect to a private address even when the first hop was admitted', async () => {
    // The stub admits only 127.0.0.1: the second hop (127.0.0.2, and localhost's ::1) is refused.
    const only = { ...CLOSED, isForbidden: (ip: string) => ip !== '127.0.0.1' };
    expect((await safeFetch(`${base}/doc.pdf`, only)).bytes.equals(PDF)).toBe(true);
    const viaLiteral = await refusal(
      `${base}/to?u=${encodeURIComponent(`http://127.0.0.2:${port}/doc.pdf`)}`,
      only,
    );
    expect(viaLiteral.message).toMatch(/private, loopback or reserved/);
    const meta = await refusal(
      `${base}/to?u=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`,
      OPEN,
    );
    expect(meta.message).toMatch(/private, loopback or reserved/);
  });

  it('follows a relative redirect and reports the final URL', async () => {
    const ok = await safeFetch(`${base}/relative`, OPEN);
    expect(ok.finalUrl).toBe(`${base}/doc.pdf`);
  });

  it('refuses an invalid redirect Location', async () => {
    const err = await refusal(`${base}/to?u=${encodeURIComponent('http://[::1')}`, OPEN);
    expect(err.message).toMatch(/invalid Location/);
  });

  it('refuses a redirect loop past maxRedirects', async () => {
    const err = await refusal(`${base}/loop`, OPEN);
    expect(err.message).toMatch(/redirected more than 5 times/);
  });

  it('caps the size by Content-Length and while streaming', async () => {
    expect((await refusal(`${base}/big-declared`, OPEN)).message).toMatch(/larger than 5000 bytes/);
    const streamed = await refusal(`${base}/big-chunked`, { ...OPEN, tooLargeCode: 'too_large' });
    expect(streamed.code).toBe('too_large');
  });

  it('gives up after the whole-request timeout', async () => {
    const started = Date.now();
    const err = await refusal(`${base}/slow`, { ...OPEN, timeoutMs: 300 });
    expect(err.message).toMatch(/within 300 ms/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('reports a non-2xx answer', async () => {
    expect((await refusal(`${base}/missing`, OPEN)).message).toMatch(/HTTP 404/);
  });

  it.each([
    `http://[::1]:PORT/doc.pdf`,
    `http://0x7f000001:PORT/doc.pdf`,
    `http://2130706433:PORT/doc.pdf`,
    `http://0177.0.0.1:PORT/doc.pdf`,
    `http://[::ffff:127.0.0.1]:PORT/doc.pdf`,
    `http://[::ffff:7f00:1]:PORT/doc.pdf`,
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00::1]/',
    'http://10.1.2.3/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://255.255.255.255/',
    'http://224.0.0.1/',
    'http://192.0.2.1/',
    'http://[64:ff9b::7f00:1]/',
    'http://[2002:7f00:1::]/',
  ])('refuses %s before connecting', async (raw) => {
    const err = await refusal(raw.replace('PORT', String(port)), CLOSED);
    expect(err.message).toMatch(/private, loopback or reserved/);
  });

  it.each(['ftp://example.com/a.pdf', 'file:///etc/passwd', 'gopher://127.0.0.1/'])(
    'refuses the scheme of %s even with allowPrivate',
    async (raw) => {
      expect((await refusal(raw, OPEN)).message).toMatch(/Only http and https/);
    },
  );

  it('refuses userinfo and malformed URLs', async () => {
    expect((await refusal(`http://user:secret@127.0.0.1:${port}/doc.pdf`, OPEN)).message).not.toMatch(
      /secret/,
    );
    expect((await refusal('not a url', OPEN)).message).toMatch(/not a valid/);
  });
});

describe('isForbiddenAddress', () => {
  it('admits public unicast, also inside NAT64 and v4-mapped forms', () => {
    for (const ip of ['8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
      expect(isForbiddenAddress(ip)).toBe(false);
    }
  });

  it('refuses special ranges; allowPrivate admits only loopback/private/CGNAT/ULA', () => {
    for (const ip of ['127.0.0.1', '::1', '10.0.0.1', '172.16.0.1', '192.168.1.1', '100.64.1.1', 'fc00::1']) {
      expect(isForbiddenAddress(ip)).toBe(true);
      expect(isForbiddenAddress(ip, true)).toBe(false);
    }
    for (const ip of ['169.254.169.254', 'fe80::1', '0.0.0.0', '::', '224.0.0.1', 'ff02::1', '2001:db8::1']) {
      expect(isForbiddenAddress(ip, true)).toBe(true);
    }
    // IPv4-compatible ::127.0.0.1 is judged as the loopback address inside it.
    expect(isForbiddenAddress('::7f00:1')).toBe(true);
    expect(isForbiddenAddress('garbage')).toBe(true);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import { corpusPath, pdftotext, pdftotextAvailable } from '../helpers/corpus.js';
import { DB_KINDS, HAVE_CORPUS } from '../helpers/env.js';
import { waitForJob } from '../helpers/jobs.js';
import { type FileServer, serveFiles } from '../helpers/serve.js';

/** One page, an edit of the document's own font: quick to run twenty times. */
const INVOICE = 'doc-invoice-itextsharp-demo.pdf';
const EDIT = [{ find: 'INV-0046', replace: 'INV-0064' }];

/**
 * SPEC rule 12 and Authentication 3, API-DECISIONS "Test and live keys": keyless edits on
 * the free tier (20 pages a day per address group) and the SAMPLE mark on the outputs of
 * keyless callers and test keys, never on live keys' outputs.
 */
describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable()).each(DB_KINDS)(
  'POST /v1/edit without a key, and the SAMPLE mark (%s)',
  (kind) => {
    let t: TestApp;
    let files: FileServer;
    let tmp: string;
    beforeAll(async () => {
      t = await startApp(kind, { ALLOW_PRIVATE_URLS: '1' });
      files = await serveFiles({ [INVOICE]: corpusPath(INVOICE) });
      tmp = mkdtempSync(path.join(tmpdir(), 'pdfedit-keyless-'));
    });
    afterAll(async () => {
      rmSync(tmp, { recursive: true, force: true });
      await files?.close();
      await t?.close();
    });

    const edit = (opts: { ip: string; headers?: Record<string, string>; options?: unknown }) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/edit',
        remoteAddress: opts.ip,
        headers: opts.headers ?? {},
        payload: {
          source: { url: files.url(INVOICE) },
          edits: EDIT,
          ...(opts.options ? { options: opts.options } : {}),
        },
      });

    /** Downloads an output through its signed link, with no key, as a client would. */
    async function download(url: string): Promise<Buffer> {
      const res = await t.app.inject({ method: 'GET', url: url.replace(t.env.config.publicBaseUrl, '') });
      expect(res.statusCode).toBe(200);
      return res.rawPayload;
    }

    /** Writes the PDF to a scratch file; returns its text by pdftotext and checks qpdf. */
    function checked(pdf: Buffer): string {
      const file = path.join(tmp, `out-${Math.random().toString(36).slice(2)}.pdf`);
      writeFileSync(file, pdf);
      execFileSync('qpdf', ['--check', file], { stdio: 'pipe' });
      return pdftotext(file).replace(/\s+/g, ' ');
    }

    it('edits without a key: the output is downloadable, carries the SAMPLE mark and checks clean', async () => {
      const res = await edit({ ip: '198.51.100.7' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe(String(10 * t.env.config.rateLimitFactor));
      const body = res.json();
      expect(body.status).toBe('done');
      expect(body.warnings).toContain('sample_mark');
      expect(body.usage).toEqual({ pages_billed: 1, remaining: 19 });
      expect(body.timings.total_ms).toBeGreaterThan(0);
      expect(body.timings.mark_ms).toBeGreaterThan(0);
      const text = checked(await download(body.output.url));
      expect(text).toContain('INV-0064');
      expect(text).toContain('SAMPLE');
      const preview = await download(body.changes[0].after_preview_url);
      expect(preview.subarray(1, 4).toString()).toBe('PNG');
    });

    it('takes the multipart form without a key', async () => {
      const boundary = '----pdfedit-keyless';
      const head =
        `--${boundary}\r\nContent-Disposition: form-data; name="edits"\r\n\r\n${JSON.stringify(EDIT)}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n` +
        'Content-Type: application/pdf\r\n\r\n';
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/edit',
        remoteAddress: '198.51.100.12',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, accept: 'application/pdf' },
        payload: Buffer.concat([
          Buffer.from(head),
          readFileSync(corpusPath(INVOICE)),
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ]),
      });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      expect(checked(res.rawPayload)).toContain('SAMPLE');
    });

    it('marks test-key outputs and never live-key outputs', async () => {
      const live = await t.newKey('marks@example.com', 'free', 'live');
      const test = await t.newKey('marks@example.com', 'free', 'test');
      const liveRes = await edit({ ip: '198.51.100.8', headers: bearer(live) });
      expect(liveRes.statusCode, liveRes.body).toBe(200);
      expect(liveRes.json().warnings).not.toContain('sample_mark');
      const liveText = checked(await download(liveRes.json().output.url));
      expect(liveText).toContain('INV-0064');
      expect(liveText).not.toContain('SAMPLE');
      const testRes = await edit({ ip: '198.51.100.8', headers: bearer(test) });
      expect(testRes.statusCode, testRes.body).toBe(200);
      expect(testRes.json().warnings).toContain('sample_mark');
      expect(checked(await download(testRes.json().output.url))).toContain('SAMPLE');
      // The PDF itself (Accept: application/pdf) is marked the same way.
      const pdf = await edit({ ip: '198.51.100.8', headers: { ...bearer(test), accept: 'application/pdf' } });
      expect(pdf.statusCode).toBe(200);
      expect(checked(pdf.rawPayload)).toContain('SAMPLE');
    });

    it("marks the output of a test key's job too, and refuses jobs without a key", async () => {
      const test = await t.newKey('jobmark@example.com', 'free', 'test');
      const queued = await edit({ ip: '198.51.100.11', headers: bearer(test), options: { async: true } });
      expect(queued.statusCode, queued.body).toBe(202);
      const job = await waitForJob(t.app, test, queued.json().job_id);
      expect(job.status).toBe('done');
      expect(job.warnings).toContain('sample_mark');
      const output = job.output as { url: string };
      expect(checked(await download(output.url))).toContain('SAMPLE');
      const keyless = await edit({ ip: '198.51.100.11', options: { async: true } });
      expect(keyless.statusCode).toBe(400);
      expect(keyless.json().error.code).toBe('invalid_request');
    });

    it('lets no client ask for (or drop) the mark, and a wrong key never falls back to keyless', async () => {
      const set = await edit({ ip: '198.51.100.9', options: { mark: 'nothing' } });
      expect(set.statusCode).toBe(400);
      expect(set.json().error.message).toContain('mark');
      const badKey = await edit({ ip: '198.51.100.9', headers: bearer('sk_live_notarealkey000000000000') });
      expect(badKey.statusCode).toBe(401);
      const stored = await t.app.inject({
        method: 'POST',
        url: '/v1/edit',
        remoteAddress: '198.51.100.9',
        payload: { source: { file_id: 'file_abc' }, edits: EDIT },
      });
      expect(stored.statusCode).toBe(404);
    });

    it('replays a keyless retry from the same address and runs it afresh for another', async () => {
      const first = await edit({ ip: '198.51.100.10', headers: { 'idempotency-key': 'kl-1' } });
      expect(first.statusCode, first.body).toBe(200);
      const again = await edit({ ip: '198.51.100.10', headers: { 'idempotency-key': 'kl-1' } });
      expect(again.statusCode).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json().usage).toEqual(first.json().usage);
      const other = await edit({ ip: '198.51.100.11', headers: { 'idempotency-key': 'kl-1' } });
      expect(other.headers['idempotent-replayed']).toBeUndefined();
      expect(other.json().usage).toEqual({ pages_billed: 1, remaining: 19 });
    });

    it('refuses the 21st keyless page of the day with 402, per IPv6 /64', async () => {
      const ip = (host: number) => `2001:db8:7:9::${host.toString(16)}`;
      for (let i = 1; i <= 20; i++) {
        // Each request its own work (a new key), from changing addresses of one /64.
        const res = await edit({ ip: ip(i), headers: { 'idempotency-key': `day-${i}` } });
        expect(res.statusCode, `request ${i}: ${res.body}`).toBe(200);
        expect(res.json().usage).toEqual({ pages_billed: 1, remaining: 20 - i });
      }
      const over = await edit({ ip: ip(21), headers: { 'idempotency-key': 'day-21' } });
      expect(over.statusCode, over.body).toBe(402);
      expect(over.json().error.code).toBe('quota_exceeded');
      // Another /64 has its own 20 pages.
      const elsewhere = await edit({ ip: '2001:db8:7:a::1', headers: { 'idempotency-key': 'day-21' } });
      expect(elsewhere.statusCode, elsewhere.body).toBe(200);
    });
  },
);

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { charge, usageOf } from '../../src/billing/meter.js';
import { ensureAccount } from '../../src/domain/accounts.js';
import { ApiError } from '../../src/kernel/api-error.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import { corpusPath, pdftotextAvailable } from '../helpers/corpus.js';
import { DB_KINDS, HAVE_CORPUS } from '../helpers/env.js';
import { download, namesCsv, pdfTexts, waitForJob } from '../helpers/jobs.js';
import { type FileServer, serveFiles } from '../helpers/serve.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';
const FORM = 'form-libreoffice-writer-needappearances.pdf';
const EDITS = [{ find: 'Bayside Wholesale', replace: '{name} Wholesale' }];

interface RecordEntry {
  index: number;
  status: string;
  output: { url: string } | null;
  changes: unknown[];
  error?: { code: string; message: string };
}

describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable()).each(DB_KINDS)(
  'POST /v1/batch (%s, embedded queue)',
  (kind) => {
    let t: TestApp;
    let key: string;
    let files: FileServer;
    beforeAll(async () => {
      t = await startApp(kind, { ALLOW_PRIVATE_URLS: '1', WORKER_GRACE_MS: '2000' });
      key = await t.newKey('batch@example.com', 'starter');
      files = await serveFiles({ [INVOICE]: corpusPath(INVOICE) });
    });
    afterAll(async () => {
      await files?.close();
      await t?.close();
    });

    const batch = (body: Record<string, unknown>, k = key, headers: Record<string, string> = {}) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/batch',
        headers: { ...bearer(k), ...headers },
        payload: { template: { url: files.url(INVOICE) }, edits: EDITS, ...body },
      });

    it('runs inline records: one output per record; a missing placeholder fails only that record', async () => {
      const res = await batch({ records: [{ name: 'Northwind' }, { other: 'x' }, { name: 'Contoso' }] });
      expect(res.statusCode, res.body).toBe(202);
      const job = await waitForJob(t.app, key, res.json().job_id);
      expect(job).toMatchObject({ kind: 'batch', status: 'partial', progress: { done: 3, total: 3 } });
      const records = job.records as RecordEntry[];
      expect(records.map((r) => [r.index, r.status])).toEqual([
        [0, 'done'],
        [1, 'failed'],
        [2, 'done'],
      ]);
      expect(records[1]!.error).toMatchObject({ code: 'invalid_request' });
      expect(records[1]!.error!.message).toContain('{name}');
      expect(records[1]!.output).toBeNull();
      const texts = pdfTexts(
        await Promise.all(
          [records[0]!, records[2]!].map((r) => download(t.app, t.env.config.publicBaseUrl, r.output!.url)),
        ),
      );
      expect(texts[0]).toContain('Northwind Wholesale');
      expect(texts[1]).toContain('Contoso Wholesale');
      expect(texts[1]).not.toContain('Bayside Wholesale');
      // Billed once for the batch: the pages of the two applied records.
      expect(job.pages_billed).toBe(2);
      expect(job.usage).toMatchObject({ pages_billed: 2 });
    });

    it('links the previews of a record made from a URL template, drawn when fetched from the job copy', async () => {
      // Its own account: the 200-record test below counts the first account's usage.
      const k = await t.newKey('batch-previews@example.com', 'starter');
      const res = await batch({ records: [{ name: 'Northwind' }] }, k);
      expect(res.statusCode, res.body).toBe(202);
      const job = await waitForJob(t.app, k, res.json().job_id);
      const record = (job.records as RecordEntry[])[0]!;
      expect(record.status).toBe('done');
      const change = record.changes[0] as { before_preview_url: string; after_preview_url: string };
      const base = t.env.config.publicBaseUrl;
      expect(change.before_preview_url).toMatch(/\/v1\/files\/file_\w+\/preview\?side=before&.*before=file_/);
      const get = (url: string) => t.app.inject({ method: 'GET', url: url.replace(base, '') });
      const [before, after] = [await get(change.before_preview_url), await get(change.after_preview_url)];
      expect(before.statusCode, before.body.slice(0, 200)).toBe(200);
      expect(after.statusCode, after.body.slice(0, 200)).toBe(200);
      expect(before.headers['content-type']).toBe('image/png');
      expect(Buffer.compare(before.rawPayload, after.rawPayload)).not.toBe(0);
      // The before file is signed into the link: another file id in its place is refused.
      const other = change.before_preview_url.replace(/before=file_\w/, 'before=file_X');
      expect((await get(other)).statusCode).toBe(401);
    });

    it('keeps each failed edit whole in a record, `field` included', async () => {
      files.put(FORM, readFileSync(corpusPath(FORM)));
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/batch',
        headers: bearer(key),
        payload: {
          template: { url: files.url(FORM) },
          edits: [{ op: 'form', fields: { 'No such field': '{n}' } }],
          records: [{ n: '1' }],
        },
      });
      expect(res.statusCode, res.body).toBe(202);
      const job = await waitForJob(t.app, key, res.json().job_id);
      const [record] = job.records as (RecordEntry & { failed: Record<string, unknown>[] })[];
      expect(record!.status).toBe('failed');
      expect(record!.failed).toEqual([
        expect.objectContaining({
          index: 0,
          op: 'form',
          reason: 'field_not_found',
          field: 'No such field',
        }),
      ]);
      expect(job.pages_billed).toBe(0);
    });

    it.runIf(kind === 'sqlite')(
      'runs 200 records from a CSV served on loopback: 200 outputs, each verified',
      async () => {
        const { csv, names } = namesCsv(200);
        files.put('records.csv', Buffer.from(csv));
        const res = await batch({ records_url: files.url('records.csv') });
        expect(res.statusCode, res.body).toBe(202);
        const job = await waitForJob(t.app, key, res.json().job_id, 400_000);
        expect(job).toMatchObject({ status: 'done', progress: { done: 200, total: 200 }, pages_billed: 200 });
        const records = job.records as RecordEntry[];
        expect(records).toHaveLength(200);
        const urls = records.map((r) => r.output!.url);
        expect(new Set(urls).size).toBe(200);
        const pdfs = await Promise.all(urls.map((u) => download(t.app, t.env.config.publicBaseUrl, u)));
        const texts = pdfTexts(pdfs);
        texts.forEach((text, i) => {
          expect(text, `record ${i}`).toContain(`${names[i]} Wholesale`);
          expect(text).not.toContain('Bayside Wholesale');
        });
        const account = await ensureAccount(t.app.db, 'batch@example.com', 'starter');
        const usage = await usageOf(
          t.app.db,
          { kind: 'account', accountId: account.id, mode: 'live', plan: 'starter' },
          Date.now(),
        );
        expect(usage.pagesUsed).toBe(202);
      },
      420_000,
    );

    it('refuses more records than the plan allows (413), with a clear message', async () => {
      const k = await t.newKey('free-batch@example.com', 'free');
      const res = await batch({ records: Array.from({ length: 51 }, (_, i) => ({ name: `n${i}` })) }, k);
      expect(res.statusCode).toBe(413);
      expect(res.json().error.code).toBe('too_large');
      expect(res.json().error.message).toContain('51 records');
      expect(res.json().error.message).toContain('50');
      const { csv } = namesCsv(51);
      files.put('51.csv', Buffer.from(csv));
      const viaCsv = await batch({ records_url: files.url('51.csv') }, k);
      expect(viaCsv.statusCode).toBe(413);
    });

    it('answers 502 upstream_error when records_url cannot be fetched, 400 for a malformed CSV', async () => {
      const missing = await batch({ records_url: files.url('absent.csv') });
      expect(missing.statusCode).toBe(502);
      expect(missing.json().error.code).toBe('upstream_error');
      files.put('bad.csv', Buffer.from('name,note\n"unterminated,x\n'));
      const bad = await batch({ records_url: files.url('bad.csv') });
      expect(bad.statusCode).toBe(400);
      files.put('ragged.csv', Buffer.from('name,note\nA,1\nB\n'));
      const ragged = await batch({ records_url: files.url('ragged.csv') });
      expect(ragged.statusCode).toBe(400);
      expect(ragged.json().error.message).toContain('line 3');
    });

    it('refuses malformed batches with 400', async () => {
      const both = await batch({ records: [{ name: 'a' }], records_url: files.url('records.csv') });
      expect(both.statusCode).toBe(400);
      const none = await batch({});
      expect(none.statusCode).toBe(400);
      const empty = await batch({ records: [] });
      expect(empty.statusCode).toBe(400);
      const unknown = await batch({ records: [{ name: 'a' }], colour: 'red' });
      expect(unknown.statusCode).toBe(400);
    });

    it('needs a key (keyless use has no batch)', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/batch',
        payload: { template: { url: files.url(INVOICE) }, edits: EDITS, records: [{ name: 'a' }] },
      });
      expect(res.statusCode).toBe(401);
    });

    it('refuses a batch whose worst case crosses the allowance (402), nothing queued', async () => {
      const k = await t.newKey('small@example.com', 'free');
      const account = await ensureAccount(t.app.db, 'small@example.com', 'free');
      // 160 of the free 200 pages used: 41 records of a one-page template could need 41.
      await charge(
        t.app.db,
        { kind: 'account', accountId: account.id, mode: 'live', plan: 'free' },
        'drain',
        160,
        {},
        Date.now(),
      );
      const over = await batch({ records: Array.from({ length: 41 }, (_, i) => ({ name: `n${i}` })) }, k);
      expect(over.statusCode, over.body).toBe(402);
      expect(over.json().error.code).toBe('quota_exceeded');
      const list = await t.app.inject({ method: 'GET', url: '/v1/jobs', headers: bearer(k) });
      expect(list.json().data).toEqual([]);
      const fits = await batch({ records: Array.from({ length: 40 }, (_, i) => ({ name: `n${i}` })) }, k);
      expect(fits.statusCode).toBe(202);
      await waitForJob(t.app, k, fits.json().job_id);
    });
  },
);

/**
 * A record whose edit fails on an untyped error (an engine double throws a plain Error for
 * one record's text) is claimed again after its lease lapses, at most MAX_ATTEMPTS times in
 * all, then fails alone with engine_error, uncharged; the other records are done and the
 * batch finishes, billed for them only.
 */
describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable()).each(DB_KINDS)(
  'POST /v1/batch, a record failing on an internal error (%s)',
  (kind) => {
    let t: TestApp;
    let key: string;
    let files: FileServer;
    beforeAll(async () => {
      t = await startApp(kind, { ALLOW_PRIVATE_URLS: '1', JOB_LEASE_MS: '1000', JOB_RECONCILE_MS: '100' });
      key = await t.newKey('batch-retry@example.com', 'starter');
      files = await serveFiles({ [INVOICE]: corpusPath(INVOICE) });
    });
    afterAll(async () => {
      vi.restoreAllMocks();
      await files?.close();
      await t?.close();
    });

    it('is retried 3 times, then fails with engine_error; the batch finishes', async () => {
      const engine = t.app.engine;
      const real = engine.edit.bind(engine);
      let boomCalls = 0;
      vi.spyOn(engine, 'edit').mockImplementation((task, timeoutMs) => {
        if (JSON.stringify(task.edits).includes('Boom Wholesale')) {
          boomCalls++;
          return Promise.reject(new Error('engine double: an untyped failure'));
        }
        return real(task, timeoutMs);
      });
      const used = async () =>
        (await t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(key) })).json()
          .pages_used as number;
      const usedBefore = await used();
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/batch',
        headers: bearer(key),
        payload: {
          template: { url: files.url(INVOICE) },
          edits: EDITS,
          records: [{ name: 'Northwind' }, { name: 'Boom' }, { name: 'Contoso' }],
        },
      });
      expect(res.statusCode, res.body).toBe(202);
      const job = await waitForJob(t.app, key, res.json().job_id, 60_000);
      expect(job).toMatchObject({ kind: 'batch', status: 'partial', progress: { done: 3, total: 3 } });
      const records = job.records as RecordEntry[];
      expect(records.map((r) => [r.index, r.status])).toEqual([
        [0, 'done'],
        [1, 'failed'],
        [2, 'done'],
      ]);
      expect(records[1]!.error).toMatchObject({ code: 'engine_error' });
      expect(records[1]!.error!.message).toContain('3 times');
      expect(records[1]!.output).toBeNull();
      expect(boomCalls).toBe(3);
      // Billed for the two applied records only, once.
      expect(job.pages_billed).toBe(2);
      expect((await used()) - usedBefore).toBe(2);
      // Nothing runs it again: the count stays where it ended.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(boomCalls).toBe(3);
    }, 90_000);

    it('waits while the engine queue is full (429 rate_limited) instead of failing the record', async () => {
      vi.restoreAllMocks();
      const engine = t.app.engine;
      const real = engine.edit.bind(engine);
      let refused = 0;
      vi.spyOn(engine, 'edit').mockImplementation((task, timeoutMs) => {
        if (JSON.stringify(task.edits).includes('Busy Wholesale') && refused < 3) {
          refused++;
          return Promise.reject(new ApiError('rate_limited', 'The engine is busy; retry shortly.'));
        }
        return real(task, timeoutMs);
      });
      try {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/batch',
          headers: bearer(key),
          payload: {
            template: { url: files.url(INVOICE) },
            edits: EDITS,
            records: [{ name: 'Northwind' }, { name: 'Busy' }],
          },
        });
        expect(res.statusCode, res.body).toBe(202);
        const job = await waitForJob(t.app, key, res.json().job_id, 60_000);
        expect(refused).toBe(3);
        expect(job).toMatchObject({ kind: 'batch', status: 'done', pages_billed: 2 });
        expect((job.records as RecordEntry[]).map((r) => [r.index, r.status])).toEqual([
          [0, 'done'],
          [1, 'done'],
        ]);
      } finally {
        vi.restoreAllMocks();
      }
    }, 90_000);
  },
);

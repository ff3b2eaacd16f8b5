import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageOf } from '../../src/billing/meter.js';
import { PLANS } from '../../src/billing/plans.js';
import { ensureAccount } from '../../src/domain/accounts.js';
import { createKey } from '../../src/domain/api-keys.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import { corpusPath, pdftotextAvailable } from '../helpers/corpus.js';
import { DB_KINDS, HAVE_CORPUS } from '../helpers/env.js';
import { download, pdfTexts, waitForJob } from '../helpers/jobs.js';
import { type FileServer, serveFiles } from '../helpers/serve.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';
const CMS = 'form-cms1490s-medicare-18p-partly-filled.pdf';

describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable()).each(DB_KINDS)(
  'jobs: async edits (%s, embedded queue)',
  (kind) => {
    let t: TestApp;
    let key: string;
    let files: FileServer;
    beforeAll(async () => {
      t = await startApp(kind, { ALLOW_PRIVATE_URLS: '1', WORKER_GRACE_MS: '2000' });
      key = await t.newKey();
      files = await serveFiles({ [INVOICE]: corpusPath(INVOICE), [CMS]: corpusPath(CMS) });
    });
    afterAll(async () => {
      await files?.close();
      await t?.close();
    });

    const edit = (k: string, file: string, edits: unknown[], options?: unknown) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/edit',
        headers: bearer(k),
        payload: { source: { url: files.url(file) }, edits, ...(options ? { options } : {}) },
      });

    it('queues options.async as a job that finishes with the body a sync edit returns, billed once', async () => {
      const res = await edit(key, INVOICE, [{ find: 'Bayside Wholesale', replace: 'Baysider Wholesale' }], {
        async: true,
      });
      expect(res.statusCode, res.body).toBe(202);
      const { job_id } = res.json();
      expect(job_id).toMatch(/^job_[0-9A-Za-z]+$/);
      const job = await waitForJob(t.app, key, job_id);
      expect(job).toMatchObject({ job_id, kind: 'edit', status: 'done', progress: { done: 1, total: 1 } });
      expect(job.pages_billed).toBe(1);
      expect(job.changes_count).toBeGreaterThanOrEqual(1);
      expect(job.usage).toMatchObject({ pages_billed: 1 });
      // The body a sync edit returns, plus the job fields.
      for (const member of ['status', 'changes', 'unmatched', 'failed', 'warnings', 'output', 'usage'])
        expect(job, member).toHaveProperty(member);
      expect(typeof job.started_at).toBe('string');
      expect(typeof job.finished_at).toBe('string');
      const output = job.output as { url: string };
      const [text] = pdfTexts([await download(t.app, t.env.config.publicBaseUrl, output.url)]);
      expect(text).toContain('Baysider Wholesale');
      // One ledger row for the job: a replay of the charge adds nothing.
      const account = await ensureAccount(t.app.db, 'owner@example.com', 'free');
      const usage = await usageOf(
        t.app.db,
        { kind: 'account', accountId: account.id, mode: 'live', plan: 'free' },
        Date.now(),
      );
      expect(usage.pagesUsed).toBe(1);
    });

    it('queues a document over the plan sync page limit without options.async', async () => {
      // The free plan's limit is 20 pages; lowered for this test so the 18-page form is over it.
      const before = PLANS.free.syncPageLimit;
      PLANS.free.syncPageLimit = 5;
      try {
        const res = await edit(key, CMS, [{ find: 'zzz-not-there', replace: 'x' }]);
        expect(res.statusCode, res.body).toBe(202);
        const job = await waitForJob(t.app, key, res.json().job_id);
        expect(job).toMatchObject({ kind: 'edit', status: 'failed', progress: { done: 18, total: 18 } });
      } finally {
        PLANS.free.syncPageLimit = before;
      }
      const sync = await edit(key, INVOICE, [{ find: 'zzz-not-there', replace: 'x' }]);
      expect(sync.statusCode).toBe(200);
    });

    it('reports unmatched edits as a finished job (status failed is 200 data, not an error)', async () => {
      const res = await edit(key, INVOICE, [{ find: 'no such phrase anywhere', replace: 'x' }], {
        async: true,
      });
      expect(res.statusCode).toBe(202);
      const job = await waitForJob(t.app, key, res.json().job_id);
      expect(job.status).toBe('failed');
      expect(job.unmatched).toEqual([{ index: 0, op: 'replace', find: 'no such phrase anywhere' }]);
      expect(job.pages_billed).toBe(0);
      expect(job.output).toBeNull();
    });

    it('hides jobs of other accounts and of the other key mode (404)', async () => {
      const res = await edit(key, INVOICE, [{ find: 'Amount Due', replace: 'Amount Owed' }], { async: true });
      const { job_id } = res.json();
      const other = await t.newKey('other@example.com');
      const account = await ensureAccount(t.app.db, 'owner@example.com', 'free');
      const testKey = (await createKey(t.app.db, account.id, 'test')).key;
      for (const k of [other, testKey]) {
        const r = await t.app.inject({ method: 'GET', url: `/v1/jobs/${job_id}`, headers: bearer(k) });
        expect(r.statusCode).toBe(404);
        expect(r.json().error.code).toBe('not_found');
        const list = await t.app.inject({ method: 'GET', url: '/v1/jobs', headers: bearer(k) });
        expect(list.json().data.map((j: { job_id: string }) => j.job_id)).not.toContain(job_id);
      }
      await waitForJob(t.app, key, job_id);
    });

    it('lists jobs newest first with a cursor, filters by status and since, validates the query', async () => {
      const all = await t.app.inject({ method: 'GET', url: '/v1/jobs?limit=200', headers: bearer(key) });
      expect(all.statusCode).toBe(200);
      const ids = all.json().data.map((j: { job_id: string }) => j.job_id);
      expect(ids.length).toBeGreaterThanOrEqual(3);
      expect(all.json().next_cursor).toBeNull();
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const url: string = `/v1/jobs?limit=1${cursor ? `&cursor=${cursor}` : ''}`;
        const page = await t.app.inject({ method: 'GET', url, headers: bearer(key) });
        expect(page.statusCode).toBe(200);
        const body = page.json();
        expect(body.data.length).toBeLessThanOrEqual(1);
        seen.push(...body.data.map((j: { job_id: string }) => j.job_id));
        cursor = body.next_cursor;
      } while (cursor);
      expect(seen).toEqual(ids);
      const entry = all.json().data[0];
      expect(Object.keys(entry).sort()).toEqual(
        [
          'changes_count',
          'created_at',
          'finished_at',
          'job_id',
          'kind',
          'pages_billed',
          'progress',
          'started_at',
          'status',
        ].sort(),
      );
      const failed = await t.app.inject({
        method: 'GET',
        url: '/v1/jobs?status=failed',
        headers: bearer(key),
      });
      expect(failed.json().data.every((j: { status: string }) => j.status === 'failed')).toBe(true);
      expect(failed.json().data.length).toBeGreaterThanOrEqual(1);
      const future = await t.app.inject({
        method: 'GET',
        url: '/v1/jobs?since=2999-01-01T00:00:00Z',
        headers: bearer(key),
      });
      expect(future.json().data).toEqual([]);
      for (const q of [
        'limit=0',
        'limit=201',
        'status=finished',
        'since=yesterday',
        'cursor=job_nope',
        'color=red',
      ]) {
        const r = await t.app.inject({ method: 'GET', url: `/v1/jobs?${q}`, headers: bearer(key) });
        expect(r.statusCode, q).toBe(400);
        expect(r.json().error.code).toBe('invalid_request');
      }
    });

    it('refuses a job that would cross the allowance with 402 before queueing', async () => {
      const k = await t.newKey('poor@example.com');
      // 18 pages, the worst case, against a free test allowance: use a test key with 200
      // pages and an 18-page document ten times would pass; drain with a ledger row instead.
      const account = await ensureAccount(t.app.db, 'poor@example.com', 'free');
      const { charge } = await import('../../src/billing/meter.js');
      await charge(
        t.app.db,
        { kind: 'account', accountId: account.id, mode: 'live', plan: 'free' },
        'drain',
        195,
        {},
        Date.now(),
      );
      const res = await edit(k, CMS, [{ find: 'Medicare', replace: 'Medicaid' }], { async: true });
      expect(res.statusCode, res.body).toBe(402);
      expect(res.json().error.code).toBe('quota_exceeded');
      const list = await t.app.inject({ method: 'GET', url: '/v1/jobs', headers: bearer(k) });
      expect(list.json().data).toEqual([]);
    });

    it('replays an async edit with the same Idempotency-Key: the same job, not a second one', async () => {
      const send = () =>
        t.app.inject({
          method: 'POST',
          url: '/v1/edit',
          headers: { ...bearer(key), 'idempotency-key': 'async-once' },
          payload: {
            source: { url: files.url(INVOICE) },
            edits: [{ find: 'Amount Due', replace: 'Total Due' }],
            options: { async: true },
          },
        });
      const a = await send();
      const b = await send();
      expect(a.statusCode).toBe(202);
      expect(b.statusCode).toBe(202);
      expect(b.json().job_id).toBe(a.json().job_id);
      expect(b.headers['idempotent-replayed']).toBe('true');
      await waitForJob(t.app, key, a.json().job_id);
    });

    it('refuses a webhook_url that is not an http(s) URL', async () => {
      const res = await edit(key, INVOICE, [{ find: 'Amount Due', replace: 'x' }], {
        webhook_url: 'ftp://x/y',
      });
      expect(res.statusCode).toBe(400);
    });
  },
);

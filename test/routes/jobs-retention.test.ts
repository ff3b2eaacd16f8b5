import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobsDb, sweepJobs } from '../../src/domain/jobs.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import { corpusPath, pdftotextAvailable } from '../helpers/corpus.js';
import { DB_KINDS, HAVE_CORPUS } from '../helpers/env.js';
import { waitForJob } from '../helpers/jobs.js';
import { type FileServer, serveFiles } from '../helpers/serve.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';
const DAY = 24 * 3600_000;

/** SPEC rule 15: job records (without document content) are kept 30 days, then removed. */
describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable()).each(DB_KINDS)(
  'job record retention with a controllable clock (%s)',
  (kind) => {
    let t: TestApp;
    let files: FileServer;
    beforeAll(async () => {
      t = await startApp(kind, { ALLOW_PRIVATE_URLS: '1' });
      files = await serveFiles({ [INVOICE]: corpusPath(INVOICE) });
    });
    afterAll(async () => {
      await files?.close();
      await t?.close();
    });

    it('answers a finished job until 30 days after it was created and not a second after', async () => {
      const key = await t.newKey('jobret@example.com');
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/edit',
        headers: bearer(key),
        payload: {
          source: { url: files.url(INVOICE) },
          edits: [{ find: 'INV-0046', replace: 'INV-0064' }],
          options: { async: true },
        },
      });
      expect(res.statusCode, res.body).toBe(202);
      const jobId: string = res.json().job_id;
      const job = await waitForJob(t.app, key, jobId);
      expect(job.status).toBe('done');
      const expiresAt = Date.parse(job.created_at as string) + 30 * DAY;
      const get = () => t.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}`, headers: bearer(key) });
      const listed = async () =>
        (await t.app.inject({ method: 'GET', url: '/v1/jobs', headers: bearer(key) }))
          .json()
          .data.map((j: { job_id: string }) => j.job_id);

      // The created_at of the body is whole seconds; the record's own expiry may be up
      // to a second later, so the "before" probe stays 2 s clear of it.
      t.app.config.now = () => expiresAt - 2000;
      expect((await get()).statusCode).toBe(200);
      expect(await listed()).toContain(jobId);

      t.app.config.now = () => expiresAt + 1000;
      const gone = await get();
      expect(gone.statusCode).toBe(404);
      expect(gone.json().error.code).toBe('not_found');
      expect(await listed()).not.toContain(jobId);
      await sweepJobs(t.app.db, t.app.config.now());
      const row = await jobsDb(t.app.db)
        .selectFrom('jobs')
        .select('id')
        .where('id', '=', jobId)
        .executeTakeFirst();
      expect(row).toBeUndefined();
    });
  },
);

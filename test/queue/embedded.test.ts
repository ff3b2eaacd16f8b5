import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/app.js';
import { usageOf } from '../../src/billing/meter.js';
import { PROJECT_ROOT } from '../../src/config.js';
import { ensureAccount } from '../../src/domain/accounts.js';
import { jobsDb } from '../../src/domain/jobs.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import { corpusPath, pdftotextAvailable } from '../helpers/corpus.js';
import { DB_KINDS, HAVE_CORPUS } from '../helpers/env.js';
import { download, pdfTexts, waitForJob } from '../helpers/jobs.js';
import { type FileServer, serveFiles } from '../helpers/serve.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';
const MAIN_TS = path.join(PROJECT_ROOT, 'src/cli/main.ts');
const EDITS = [{ find: 'Bayside Wholesale', replace: '{name} Wholesale' }];
const LEASES = {
  JOB_LEASE_MS: '2000',
  JOB_RECONCILE_MS: '300',
  WORKER_GRACE_MS: '3000',
  ALLOW_PRIVATE_URLS: '1',
};

describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable()).each(DB_KINDS)(
  'embedded queue durability (%s)',
  (kind) => {
    let t: TestApp;
    let key: string;
    let files: FileServer;
    beforeAll(async () => {
      // This instance only queues: the jobs are run by the instances and processes below.
      t = await startApp(kind, { ...LEASES, JOB_WORKERS: '0' });
      key = await t.newKey('durable@example.com', 'starter');
      files = await serveFiles({ [INVOICE]: corpusPath(INVOICE) });
    });
    afterAll(async () => {
      await files?.close();
      await t?.close();
    });

    const post = (url: string, payload: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url, headers: bearer(key), payload });

    it('resumes after a restart: queued jobs and a batch record held by a dead worker', async () => {
      const edit = await post('/v1/edit', {
        source: { url: files.url(INVOICE) },
        edits: [{ find: 'Amount Due', replace: 'Amount Owed' }],
        options: { async: true },
      });
      const batch = await post('/v1/batch', {
        template: { url: files.url(INVOICE) },
        edits: EDITS,
        records: [{ name: 'One' }, { name: 'Two' }, { name: 'Three' }],
      });
      expect(edit.statusCode).toBe(202);
      expect(batch.statusCode).toBe(202);
      const batchId: string = batch.json().job_id;
      // As if a worker had been killed holding record 1 (its lease has lapsed).
      await jobsDb(t.app.db)
        .updateTable('jobs')
        .set({ status: 'running', lease_until: 0 })
        .where('id', '=', batchId)
        .execute();
      await jobsDb(t.app.db)
        .updateTable('job_records')
        .set({ status: 'running', owner: 'dead-worker', lease_until: Date.now() - 1 })
        .where('job_id', '=', batchId)
        .where('idx', '=', 1)
        .execute();
      // A fresh process on the same database (the in-process queue starts empty).
      const restarted = await buildServer({ ...t.env.config, jobs: { ...t.env.config.jobs, workers: 2 } });
      try {
        const e = await waitForJob(t.app, key, edit.json().job_id, 60_000);
        expect(e.status).toBe('done');
        const b = await waitForJob(t.app, key, batchId, 60_000);
        expect(b).toMatchObject({ status: 'done', progress: { done: 3, total: 3 }, pages_billed: 3 });
      } finally {
        await restarted.close();
      }
    });

    it('answers 202 when the queue refuses the bell: the job is stored and runs later', async () => {
      const queue = t.app.jobs.queue;
      const ring = queue.ring.bind(queue);
      queue.ring = async () => {
        throw new Error('queue down');
      };
      let res: Awaited<ReturnType<typeof post>>;
      try {
        res = await post('/v1/edit', {
          source: { url: files.url(INVOICE) },
          edits: [{ find: 'Amount Due', replace: 'Amount Owed' }],
          options: { async: true },
        });
      } finally {
        queue.ring = ring;
      }
      expect(res.statusCode, res.body).toBe(202);
      const restarted = await buildServer({ ...t.env.config, jobs: { ...t.env.config.jobs, workers: 1 } });
      try {
        expect((await waitForJob(t.app, key, res.json().job_id, 60_000)).status).toBe('done');
      } finally {
        await restarted.close();
      }
    });

    it.runIf(kind === 'sqlite')(
      'survives kill -9 of a worker process mid-batch: every record once, billed once',
      async () => {
        const children: ChildProcess[] = [];
        const worker = () => {
          const child = spawn(
            process.execPath,
            ['--import', 'tsx', MAIN_TS, 'worker', '--concurrency', '2'],
            {
              cwd: PROJECT_ROOT,
              env: {
                ...process.env,
                ...LEASES,
                REDIS_URL: '',
                DATA_DIR: t.env.config.dataDir,
                DATABASE_URL: t.env.config.databaseUrl,
                LOG_LEVEL: 'error',
              },
              stdio: ['ignore', 'ignore', 'inherit'],
            },
          );
          children.push(child);
          return child;
        };
        try {
          const names = Array.from({ length: 60 }, (_, i) => `Embedded ${i}`);
          const res = await post('/v1/batch', {
            template: { url: files.url(INVOICE) },
            edits: EDITS,
            records: names.map((name) => ({ name })),
          });
          expect(res.statusCode).toBe(202);
          const jobId: string = res.json().job_id;
          const a = worker();
          const until = Date.now() + 120_000;
          for (;;) {
            const r = await t.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}`, headers: bearer(key) });
            if (r.json().progress.done >= 10) break;
            if (Date.now() > until) throw new Error('batch did not start');
            await new Promise((r) => setTimeout(r, 100));
          }
          a.kill('SIGKILL');
          await new Promise((r) => a.once('exit', r));
          worker();
          const job = await waitForJob(t.app, key, jobId, 240_000);
          expect(job).toMatchObject({ status: 'done', progress: { done: 60, total: 60 }, pages_billed: 60 });
          const records = job.records as { output: { url: string } }[];
          const urls = records.map((r) => r.output.url);
          expect(new Set(urls).size).toBe(60);
          const texts = pdfTexts(
            await Promise.all(urls.map((u) => download(t.app, t.env.config.publicBaseUrl, u))),
          );
          texts.forEach((text, i) => {
            expect(text).toContain(`${names[i]} Wholesale`);
          });
          const account = await ensureAccount(t.app.db, 'durable@example.com', 'starter');
          const subject = {
            kind: 'account' as const,
            accountId: account.id,
            mode: 'live' as const,
            plan: 'starter' as const,
          };
          const before = (await usageOf(t.app.db, subject, Date.now())).pagesUsed;
          expect(before).toBe(4 + 60);
        } finally {
          for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
        }
      },
      300_000,
    );
  },
);

import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageOf } from '../../src/billing/meter.js';
import { PROJECT_ROOT } from '../../src/config.js';
import { ensureAccount } from '../../src/domain/accounts.js';
import { jobsDb } from '../../src/domain/jobs.js';
import { assertNoEviction } from '../../src/queue/redis-policy.js';
import { buildWorker } from '../../src/queue/worker-app.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import { corpusPath, pdftotextAvailable } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import { download, namesCsv, pdfTexts, waitForJob } from '../helpers/jobs.js';
import { countKeys, dropPrefix, REDIS_URL, uniquePrefix } from '../helpers/redis.js';
import { type FileServer, serveFiles } from '../helpers/serve.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';
const MAIN_TS = path.join(PROJECT_ROOT, 'src/cli/main.ts');

describe('Redis eviction policy check', () => {
  const client = (info: string) => ({ info: async () => info });
  it('accepts noeviction and refuses anything else or nothing', async () => {
    await expect(
      assertNoEviction(client('# Memory\r\nmaxmemory_policy:noeviction\r\n')),
    ).resolves.toBeUndefined();
    await expect(assertNoEviction(client('maxmemory_policy:allkeys-lru\r\n'))).rejects.toThrow(/allkeys-lru/);
    await expect(assertNoEviction(client('used_memory:1\r\n'))).rejects.toThrow(/maxmemory_policy/);
  });
});

describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable())('BullMQ on the real Redis (postgres)', () => {
  const prefix = uniquePrefix();
  const env = {
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    ALLOW_PRIVATE_URLS: '1',
    JOB_LEASE_MS: '3000',
    JOB_RECONCILE_MS: '500',
    WORKER_GRACE_MS: '3000',
    BATCH_SHARDS: '4',
  };
  let t: TestApp;
  let key: string;
  let files: FileServer;
  const children: ChildProcess[] = [];

  /** `pdfedit worker` as its own process, sharing PostgreSQL, Redis and DATA_DIR with the API. */
  function startWorkerProcess(): ChildProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN_TS, 'worker'], {
      cwd: PROJECT_ROOT,
      env: {
        ...process.env,
        ...env,
        DATA_DIR: t.env.config.dataDir,
        DATABASE_URL: t.env.config.databaseUrl,
        JOB_WORKERS: '2',
        ENGINE_THREADS: '2',
        LOG_LEVEL: 'error',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    return child;
  }

  beforeAll(async () => {
    // The API only queues (JOB_WORKERS=0): every job runs in a worker.
    t = await startApp('postgres', { ...env, JOB_WORKERS: '0' });
    key = await t.newKey('redis@example.com', 'starter');
    files = await serveFiles({ [INVOICE]: corpusPath(INVOICE) });
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await files?.close();
    await t?.close();
    await dropPrefix(prefix);
    expect(await countKeys(prefix)).toBe(0);
  });

  const progressOf = async (jobId: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}`, headers: bearer(key) });
    return res.json() as { status: string; progress: { done: number; total: number } };
  };

  it('survives kill -9 of a worker process mid-batch: 200 outputs, each verified, billed once', async () => {
    const a = startWorkerProcess();
    startWorkerProcess();
    const { csv, names } = namesCsv(200);
    files.put('records.csv', Buffer.from(csv));
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/batch',
      headers: bearer(key),
      payload: {
        template: { url: files.url(INVOICE) },
        edits: [{ find: 'Bayside Wholesale', replace: '{name} Wholesale' }],
        records_url: files.url('records.csv'),
      },
    });
    expect(res.statusCode, res.body).toBe(202);
    const jobId: string = res.json().job_id;
    // Kill one worker while the batch is under way and it holds records.
    const until = Date.now() + 120_000;
    for (;;) {
      const p = await progressOf(jobId);
      if (p.progress.done >= 30) break;
      if (Date.now() > until) throw new Error(`batch did not start: ${JSON.stringify(p)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    a.kill('SIGKILL');
    await new Promise((r) => a.once('exit', r));
    const mid = await progressOf(jobId);
    expect(mid.status).toBe('running');
    expect(mid.progress.done).toBeLessThan(200);

    const job = await waitForJob(t.app, key, jobId, 300_000);
    expect(job).toMatchObject({ status: 'done', progress: { done: 200, total: 200 }, pages_billed: 200 });
    const records = job.records as { index: number; status: string; output: { url: string } }[];
    expect(records.map((r) => r.index)).toEqual(names.map((_, i) => i));
    const urls = records.map((r) => r.output.url);
    expect(new Set(urls).size).toBe(200);
    const texts = pdfTexts(
      await Promise.all(urls.map((u) => download(t.app, t.env.config.publicBaseUrl, u))),
    );
    texts.forEach((text, i) => {
      expect(text, `record ${i}`).toContain(`${names[i]} Wholesale`);
    });
    // Billed once: one ledger row for the job, 200 pages.
    const account = await ensureAccount(t.app.db, 'redis@example.com', 'starter');
    const usage = await usageOf(
      t.app.db,
      { kind: 'account', accountId: account.id, mode: 'live', plan: 'starter' },
      Date.now(),
    );
    expect(usage.pagesUsed).toBe(200);
  }, 400_000);

  it('loses no job when Redis loses its bells: the reconciler rings again from the database', async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
    await Promise.all(
      children.map((c) =>
        c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : null,
      ),
    );
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/edit',
      headers: bearer(key),
      payload: {
        source: { url: files.url(INVOICE) },
        edits: [{ find: 'Amount Due', replace: 'Amount Owed' }],
        options: { async: true },
      },
    });
    expect(res.statusCode).toBe(202);
    const jobId: string = res.json().job_id;
    // As after a Redis restart without persistence: every key of the queue is gone.
    await dropPrefix(prefix);
    expect(await countKeys(prefix)).toBe(0);
    const worker = await buildWorker({ ...t.env.config, jobs: { ...t.env.config.jobs, workers: 1 } });
    try {
      const job = await waitForJob(t.app, key, jobId, 60_000);
      expect(job.status).toBe('done');
      const row = await jobsDb(t.app.db)
        .selectFrom('jobs')
        .select('attempts')
        .where('id', '=', jobId)
        .executeTakeFirst();
      expect(row?.attempts).toBe(1);
    } finally {
      await worker.close();
    }
  });

  it('on SIGTERM a worker finishes or releases its work, and exits', async () => {
    const records = Array.from({ length: 40 }, (_, i) => ({ name: `Term ${i}` }));
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/batch',
      headers: bearer(key),
      payload: {
        template: { url: files.url(INVOICE) },
        edits: [{ find: 'Bayside Wholesale', replace: '{name} Wholesale' }],
        records,
      },
    });
    const jobId: string = res.json().job_id;
    const child = startWorkerProcess();
    const until = Date.now() + 120_000;
    while ((await progressOf(jobId)).progress.done < 5) {
      if (Date.now() > until) throw new Error('batch did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const t0 = Date.now();
    child.kill('SIGTERM');
    const code = await new Promise((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(15_000);
    // Nothing is left held by the stopped worker: no record runs under a live lease.
    const held = await jobsDb(t.app.db)
      .selectFrom('job_records')
      .select('idx')
      .where('job_id', '=', jobId)
      .where('status', '=', 'running')
      .where('lease_until', '>', Date.now())
      .execute();
    expect(held).toEqual([]);
    startWorkerProcess();
    const job = await waitForJob(t.app, key, jobId, 120_000);
    expect(job).toMatchObject({ status: 'done', progress: { done: 40, total: 40 } });
  }, 200_000);
});

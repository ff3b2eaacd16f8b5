import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureAccount } from '../../src/domain/accounts.js';
import { createKey } from '../../src/domain/api-keys.js';
import { jobsDb } from '../../src/domain/jobs.js';
import { isErrorCode } from '../../src/kernel/error-codes.js';
import { migrateToLatest, openDatabase } from '../../src/store/db.js';
import type { FilesSchema } from '../../src/store/files-schema.js';
import type { Database } from '../../src/store/schema.js';
import { corpusPath, pdftotextAvailable } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import {
  alive,
  freePort,
  HAVE_REDIS_SERVER,
  PG_BIN,
  type PrivatePostgres,
  type PrivateRedis,
  type ServiceProcess,
  sleep,
  startApiProcess,
  startPrivatePostgres,
  startPrivateRedis,
  startWorkerProcess,
} from '../helpers/private-services.js';
import { type FileServer, serveFiles } from '../helpers/serve.js';

/**
 * Fault injection (issue 21 item 5): the service as real processes (API and `pdfedit
 * worker`) on a private PostgreSQL cluster and a private Redis, which these tests kill,
 * restart and flush; DATA_DIR on a tmpfs of fixed size that they fill up. Whatever the
 * fault: no accepted job is lost, each piece of work is charged once, no download is ever
 * a partial file, and a dependency that is down gives a typed error, not a hang.
 */

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';
const READY = HAVE_CORPUS && HAVE_REDIS_SERVER && PG_BIN !== undefined && pdftotextAvailable();
const ACCOUNT = 'faults@example.com';

interface Answer {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

describe.skipIf(!READY)('fault injection (private PostgreSQL, Redis, tmpfs; real processes)', () => {
  let redis: PrivateRedis;
  let pgsrv: PrivatePostgres;
  let db: Kysely<Database>;
  let closeDb: () => Promise<void>;
  let files: FileServer;
  let dataDir: string;
  let root: string;
  let tmpfs = false;
  let port: number;
  let base: string;
  let key: string;
  let accountId: string;
  let api: ServiceProcess | undefined;
  const workers: ServiceProcess[] = [];
  /** What each fault did, measured; printed after the run (the table of the note). */
  const notes: string[] = [];
  const note = (fault: string, what: string) => notes.push(`${fault.padEnd(26)} ${what}`);
  let env: Record<string, string>;

  beforeAll(async () => {
    [redis, pgsrv, files] = await Promise.all([
      startPrivateRedis(),
      startPrivatePostgres(),
      serveFiles({ [INVOICE]: corpusPath(INVOICE) }),
    ]);
    root = mkdtempSync(path.join(tmpdir(), 'pdfedit-faults-'));
    dataDir = path.join(root, 'data');
    mkdirSync(dataDir);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m,mode=0700', 'tmpfs', dataDir], { stdio: 'pipe' });
      tmpfs = true;
    } catch (err) {
      console.warn(
        `fault tests: cannot mount a tmpfs for DATA_DIR (${String(err).split('\n')[0]}); the disk-full case is skipped`,
      );
    }
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = {
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: base,
      DATA_DIR: dataDir,
      DATABASE_URL: pgsrv.url,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: 'faults',
      TOKEN_SECRET: randomBytes(32).toString('hex'),
      ALLOW_PRIVATE_URLS: '1',
      JOB_LEASE_MS: '3000',
      JOB_RECONCILE_MS: '500',
      WORKER_GRACE_MS: '2000',
      BATCH_SHARDS: '2',
      SYNC_TIMEOUT_MS: '5000',
      ENGINE_PROCESSES: '1',
      ENGINE_THREADS: '1',
      JOB_WORKERS: '3',
      RATE_LIMIT_FACTOR: '1000',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL || 'warn',
    };
    const opened = openDatabase(pgsrv.url, { onPoolError: () => {} });
    db = opened.db;
    closeDb = opened.close;
    await migrateToLatest(db);
    const account = await ensureAccount(db, ACCOUNT, 'starter');
    accountId = account.id;
    key = (await createKey(db, accountId, 'live')).key;
  });

  afterAll(async () => {
    if (notes.length > 0) console.log(`fault injection, measured:\n${notes.join('\n')}`);
    if (process.env.FAULTS_DEBUG) {
      console.log(`API:\n${api?.output()}`);
      for (const w of workers) console.log(`WORKER:\n${w.output()}`);
    }
    for (const w of workers) await w.kill9().catch(() => {});
    await api?.kill9().catch(() => {});
    await closeDb?.();
    await files?.close();
    await redis?.stop();
    await pgsrv?.destroy();
    if (tmpfs) execFileSync('umount', ['-l', dataDir]);
    if (root) rmSync(root, { recursive: true, force: true });
  });

  async function startApi(extra: Record<string, string> = {}): Promise<ServiceProcess> {
    api = await startApiProcess({ ...env, ...extra });
    return api;
  }

  async function startWorker(extra: Record<string, string> = {}): Promise<ServiceProcess> {
    const w = await startWorkerProcess({ ...env, ...extra });
    workers.push(w);
    return w;
  }

  /** One call to the API; a hang is a failure (the client gives up after `timeoutMs`). */
  async function call(method: string, url: string, payload?: unknown, timeoutMs = 20_000): Promise<Answer> {
    const t0 = Date.now();
    const res = await fetch(`${base}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: payload !== undefined ? JSON.stringify(payload) : undefined,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      body = { raw: text };
    }
    return { status: res.status, body, ms: Date.now() - t0 };
  }

  /** A 5xx or 4xx answer carries a code of the closed list, and its status is that code's. */
  function expectTypedError(a: Answer, statuses: number[]) {
    expect(statuses, JSON.stringify(a)).toContain(a.status);
    const err = a.body.error as { code: string; message: string; hint: string } | undefined;
    expect(err, JSON.stringify(a.body)).toBeDefined();
    expect(isErrorCode(err!.code), err!.code).toBe(true);
    expect(typeof err!.message).toBe('string');
  }

  const editBody = (find: string, replace: string, options: Record<string, unknown> = {}) => ({
    source: { url: files.url(INVOICE) },
    edits: [{ find, replace }],
    ...(Object.keys(options).length ? { options } : {}),
  });

  async function jobRow(id: string) {
    return jobsDb(db).selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  }

  /** Polls GET /v1/jobs/{id} until finished; transient typed 5xx are tolerated. */
  async function waitJob(id: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const a = await call('GET', `/v1/jobs/${id}`).catch(() => undefined);
      if (a?.status === 200 && ['done', 'partial', 'failed'].includes(String(a.body.status))) return a.body;
      if (Date.now() > end)
        throw new Error(`job ${id} unfinished after ${timeoutMs} ms: ${JSON.stringify(a)}`);
      await sleep(200);
    }
  }

  /** Charges of the account: one ledger row per piece of work. */
  async function chargesOf(workId?: string) {
    let q = db
      .withTables<{ usage_charges: { subject: string; work_id: string; billed: number } }>()
      .selectFrom('usage_charges')
      .select(['work_id', 'billed'])
      .where('subject', '=', accountId);
    if (workId) q = q.where('work_id', '=', workId);
    return q.execute();
  }

  /** Downloads an output link and checks it is the whole file the service recorded. */
  async function downloadChecked(url: string, mustContain?: string): Promise<Buffer> {
    const res = await fetch(url.replace('http://127.0.0.1:8080', base), {
      signal: AbortSignal.timeout(20_000),
    });
    expect(res.status, url).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.length).toBe(Number(res.headers.get('content-length')));
    const fileId = new URL(url).pathname.split('/')[3]!;
    const row = await db
      .withTables<FilesSchema>()
      .selectFrom('files')
      .select(['sha256', 'size', 'status'])
      .where('id', '=', fileId)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('stored');
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(row.sha256);
    expect(bytes.length).toBe(Number(row.size));
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(bytes.subarray(-32).toString('latin1')).toContain('%%EOF');
    if (mustContain) {
      const file = path.join(root, `${fileId}.pdf`);
      writeFileSync(file, bytes);
      const text = execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' }).replace(/\s+/g, ' ');
      expect(text).toContain(mustContain);
      rmSync(file);
    }
    return bytes;
  }

  /** Every output the service has marked stored is complete on disk: no half file can be served. */
  async function expectEveryStoredFileWhole() {
    const rows = await db
      .withTables<FilesSchema>()
      .selectFrom('files')
      .select(['id', 'blob_key', 'sha256', 'size'])
      .where('status', '=', 'stored')
      .execute();
    for (const r of rows) {
      const bytes = await import('node:fs/promises').then((fs) =>
        fs.readFile(path.join(dataDir, 'blobs', r.blob_key!)),
      );
      expect(bytes.length, r.id).toBe(Number(r.size));
      expect(createHash('sha256').update(bytes).digest('hex'), r.id).toBe(r.sha256);
    }
    return rows.length;
  }

  async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>) {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await sleep(10);
    }
  }

  /** The engine processes of a killed service end with it (none is left orphaned, busy). */
  async function expectGone(pids: number[]) {
    await waitFor('the orphaned engine processes to exit', 20_000, async () =>
      pids.every((p) => !alive(p)) ? true : undefined,
    );
  }

  it('kill -9 of the API mid sync edit: the retry finishes it, charged once, the file whole', async () => {
    await startApi();
    // Warm the engine so the edit below spends its time in the edit, not in the cold start.
    const warm = await call('POST', '/v1/text', { source: { url: files.url(INVOICE) } });
    expect(warm.status, JSON.stringify(warm.body)).toBe(200);
    const body = editBody('Amount Due', 'Amount Owed');
    const first = call('POST', '/v1/edit', body).then(
      (a) => ({ answered: a }),
      (err: unknown) => ({ error: err }),
    );
    // The request is inside its idempotent run (quota checked, engine called) once its record is.
    await waitFor('a running idempotency record', 10_000, async () => {
      const r = await db
        .withTables<{ idempotency_records: { state: string; scope: string } }>()
        .selectFrom('idempotency_records')
        .select('state')
        .where('state', '=', 'running')
        .executeTakeFirst();
      return r ? true : undefined;
    });
    await sleep(40);
    const engines = await api!.kill9();
    expect(engines.length).toBeGreaterThan(0);
    const outcome = await first;
    expect('error' in outcome, JSON.stringify(outcome)).toBe(true);
    await expectGone(engines);
    const chargedBeforeRetry = (await chargesOf()).length;
    await startApi();
    // The same body again (the key is derived from it): 409 while the dead request's lease
    // lasts, then the takeover runs it; never a second charge.
    const t0 = Date.now();
    let conflicts = 0;
    let a: Answer;
    for (;;) {
      a = await call('POST', '/v1/edit', body, 30_000);
      if (a.status !== 409) break;
      expectTypedError(a, [409]);
      conflicts++;
    }
    note(
      'kill -9 API, sync edit',
      `client: connection reset; charged before the kill: ${chargedBeforeRetry}; retry: ${conflicts}x 409 conflict, then ${a.status} after ${Date.now() - t0} ms`,
    );
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    const output = a.body.output as { url: string };
    await downloadChecked(output.url, 'Amount Owed');
    const charges = await chargesOf();
    expect(charges).toHaveLength(1);
    expect(charges[0]!.billed).toBe((a.body.usage as { pages_billed: number }).pages_billed);
  }, 90_000);

  /** Each case can also run alone (vitest -t): an API that runs jobs itself then. */
  async function ensureApi() {
    if (!api || api.child.exitCode !== null || api.child.signalCode !== null) await startApi();
  }

  async function submitBatch(n: number, tag: string): Promise<{ id: string; names: string[] }> {
    const names = Array.from({ length: n }, (_, i) => `${tag} ${i}`);
    const a = await call('POST', '/v1/batch', {
      template: { url: files.url(INVOICE) },
      edits: [{ find: 'Bayside Wholesale', replace: '{name} Wholesale' }],
      records: names.map((name) => ({ name })),
    });
    expect(a.status, JSON.stringify(a.body)).toBe(202);
    return { id: String(a.body.job_id), names };
  }

  async function submitJob(find: string, replace: string): Promise<string> {
    const a = await call('POST', '/v1/edit', editBody(find, replace, { async: true }));
    expect(a.status, JSON.stringify(a.body)).toBe(202);
    return String(a.body.job_id);
  }

  /** Records some shard has taken (running or finished). */
  async function recordsTaken(id: string): Promise<number> {
    const rows = await jobsDb(db)
      .selectFrom('job_records')
      .select('status')
      .where('job_id', '=', id)
      .where('status', '!=', 'pending')
      .execute();
    return rows.length;
  }

  async function recordsDone(id: string): Promise<number> {
    const rows = await jobsDb(db)
      .selectFrom('job_records')
      .select('status')
      .where('job_id', '=', id)
      .where('status', 'not in', ['pending', 'running'])
      .execute();
    return rows.length;
  }

  /** A finished batch: every record done, its own whole output, one charge of every page. */
  async function expectBatchDone(id: string, names: string[]) {
    const job = await waitJob(id, 90_000);
    expect(job, JSON.stringify(job)).toMatchObject({ status: 'done', pages_billed: names.length });
    const records = job.records as { index: number; status: string; output: { url: string } }[];
    expect(records.map((r) => r.status)).toEqual(names.map(() => 'done'));
    expect(new Set(records.map((r) => r.output.url)).size).toBe(names.length);
    for (const r of records) await downloadChecked(r.output.url, `${names[r.index]} Wholesale`);
    const charges = await chargesOf(id);
    expect(charges).toEqual([{ work_id: id, billed: names.length }]);
  }

  /** A finished edit job: done, whole output, charged once. Returns its attempts. */
  async function expectJobDone(id: string, text: string): Promise<number> {
    const job = await waitJob(id, 60_000);
    expect(job.status, JSON.stringify(job)).toBe('done');
    await downloadChecked((job.output as { url: string }).url, text);
    const charges = await chargesOf(id);
    expect(charges).toHaveLength(1);
    expect(charges[0]!.billed).toBe(job.pages_billed);
    return (await jobRow(id)).attempts;
  }

  it('kill -9 of the API mid job and mid batch: both resume after the lease, charged once', async () => {
    // The batch first, then the job: with one engine process the job's edit waits behind
    // the batch's records, so the kill finds both under way.
    const batch = await submitBatch(10, 'ApiKill');
    await waitFor('the batch under way', 60_000, async () =>
      (await recordsTaken(batch.id)) >= 1 ? true : undefined,
    );
    const jobId = await submitJob('Amount Due', 'Amount Payable');
    await waitFor('the job running', 20_000, async () =>
      (await jobRow(jobId)).status === 'running' ? true : undefined,
    );
    const engines = await api!.kill9();
    // Killed in the middle of both (else this case would prove nothing).
    expect((await jobRow(jobId)).status).toBe('running');
    expect(await recordsDone(batch.id)).toBeLessThan(10);
    // From here on the API only queues (JOB_WORKERS=0) and a `pdfedit worker` process runs
    // the jobs: it resumes the dead API's job and batch once their leases lapse.
    await Promise.all([startApi({ JOB_WORKERS: '0' }), startWorker({ JOB_WORKERS: '3' })]);
    await expectGone(engines);
    const t0 = Date.now();
    const attempts = await expectJobDone(jobId, 'Amount Payable');
    expect(attempts).toBeGreaterThanOrEqual(2);
    await expectBatchDone(batch.id, batch.names);
    note(
      'kill -9 API, job + batch',
      `job attempts ${attempts}; job and 10-record batch done ${Date.now() - t0} ms after the new processes were up`,
    );
  }, 120_000);

  it('kill -9 of a worker process mid job and mid batch: another worker finishes both, charged once', async () => {
    // The API only queues from here on; `pdfedit worker` processes run the jobs.
    if (!api) await startApi({ JOB_WORKERS: '0' });
    const w1 = workers.at(-1) ?? (await startWorker({ JOB_WORKERS: '3' }));
    const batch = await submitBatch(10, 'WorkerKill');
    await waitFor('the batch under way', 60_000, async () =>
      (await recordsTaken(batch.id)) >= 1 ? true : undefined,
    );
    const jobId = await submitJob('Amount Due', 'Amount Outstanding');
    await waitFor('the job running', 30_000, async () =>
      (await jobRow(jobId)).status === 'running' ? true : undefined,
    );
    const engines = await w1.kill9();
    expect(engines.length).toBeGreaterThan(0);
    expect((await jobRow(jobId)).status).toBe('running');
    expect(await recordsDone(batch.id)).toBeLessThan(10);
    await startWorker({ JOB_WORKERS: '3' });
    await expectGone(engines);
    const t0 = Date.now();
    const attempts = await expectJobDone(jobId, 'Amount Outstanding');
    await expectBatchDone(batch.id, batch.names);
    note(
      'kill -9 worker, job + batch',
      `job attempts ${attempts}; job and batch done ${Date.now() - t0} ms after the second worker was up`,
    );
  }, 120_000);

  it('Redis restarted mid batch: the API still answers (202, 200), nothing is lost, charged once', async () => {
    await ensureApi();
    const batch = await submitBatch(10, 'RedisRestart');
    await waitFor('the batch under way', 60_000, async () =>
      (await recordsDone(batch.id)) >= 2 ? true : undefined,
    );
    await redis.kill();
    let queued: Answer;
    try {
      // While Redis is down: a job is still accepted (stored; the bell is rung later), polling
      // works, a sync edit runs (the rate limit and concurrency counters let it through).
      queued = await call('POST', '/v1/edit', editBody('Amount Due', 'Amount Queued', { async: true }));
      expect(queued.status, JSON.stringify(queued.body)).toBe(202);
      expect(queued.ms).toBeLessThan(5_000);
      const polled = await call('GET', `/v1/jobs/${batch.id}`);
      expect(polled.status).toBe(200);
      expect(polled.ms).toBeLessThan(5_000);
      const sync = await call('POST', '/v1/edit', editBody('Amount Due', 'Amount Synced'));
      expect(sync.status, JSON.stringify(sync.body)).toBe(200);
      expect(sync.ms).toBeLessThan(8_000);
      await downloadChecked((sync.body.output as { url: string }).url, 'Amount Synced');
      note(
        'Redis down',
        `POST async 202 in ${queued.ms} ms, GET job 200 in ${polled.ms} ms, sync edit 200 in ${sync.ms} ms`,
      );
      await sleep(500);
    } finally {
      await redis.start();
    }
    const t0 = Date.now();
    await expectBatchDone(batch.id, batch.names);
    await expectJobDone(String(queued.body.job_id), 'Amount Queued');
    note(
      'Redis restarted',
      `batch and the job queued while down done ${Date.now() - t0} ms after the restart`,
    );
  }, 120_000);

  it('Redis flushed (FLUSHALL) mid batch and mid sync edit: the reconciler rings again, counters stay sane', async () => {
    await ensureApi();
    const batch = await submitBatch(10, 'Flushed');
    const jobId = await submitJob('Amount Due', 'Amount Flushed');
    await waitFor('the batch under way', 60_000, async () =>
      (await recordsDone(batch.id)) >= 2 ? true : undefined,
    );
    const sync = call('POST', '/v1/edit', editBody('Amount Due', 'Amount Meanwhile'));
    await sleep(50);
    await redis.flushAll();
    const t0 = Date.now();
    const answered = await sync;
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    await expectBatchDone(batch.id, batch.names);
    await expectJobDone(jobId, 'Amount Flushed');
    note('Redis FLUSHALL', `sync edit 200; batch and job done ${Date.now() - t0} ms after the flush`);
    // The account's concurrency counter never goes below zero (a negative one would let
    // more sync edits run at once than the plan allows).
    const { Redis } = await import('ioredis');
    const r = new Redis(redis.url);
    try {
      const keys = await r.keys('*conc*');
      for (const k of keys) expect(Number(await r.get(k)), k).toBeGreaterThanOrEqual(0);
    } finally {
      r.disconnect();
    }
  }, 120_000);

  it('a PostgreSQL connection that dies inside a transaction fails the transaction, not the process', async () => {
    // Every process (API, worker, this one) opens PostgreSQL this way. A checked-out client
    // whose server goes away between two statements emits 'error'; unheard, that event is
    // an uncaught exception that ends the process (a worker died so mid-batch).
    const opened = openDatabase(pgsrv.url);
    try {
      const tx = opened.db.transaction().execute(async (trx) => {
        await sql`SELECT 1`.execute(trx);
        await pgsrv.stopServer();
        await sleep(300);
        await sql`SELECT 1`.execute(trx);
      });
      await expect(tx).rejects.toThrow();
    } finally {
      await pgsrv.startServer();
    }
    // The pool dropped the dead client: the next query opens a new connection.
    const r = await sql<{ n: number }>`SELECT 1 AS n`.execute(opened.db);
    expect(r.rows[0]!.n).toBe(1);
    await opened.close();
  });

  it('PostgreSQL restarted mid job and mid batch: typed 5xx while down (no hang), then everything finishes, charged once', async () => {
    await ensureApi();
    const batch = await submitBatch(10, 'PgRestart');
    await waitFor('the batch under way', 60_000, async () =>
      (await recordsDone(batch.id)) >= 2 ? true : undefined,
    );
    const jobId = await submitJob('Amount Due', 'Amount Restarted');
    await waitFor('the job running', 20_000, async () =>
      (await jobRow(jobId)).status === 'running' ? true : undefined,
    );
    const others = async () =>
      (await chargesOf()).filter((c) => c.work_id !== jobId && c.work_id !== batch.id).length;
    const chargesBefore = await others();
    await pgsrv.stopServer();
    try {
      const polled = await call('GET', `/v1/jobs/${batch.id}`);
      expectTypedError(polled, [500]);
      expect(polled.ms).toBeLessThan(8_000);
      const edit = await call('POST', '/v1/edit', editBody('Amount Due', 'Amount Down'));
      expectTypedError(edit, [500]);
      expect(edit.ms).toBeLessThan(8_000);
      // A clear error while the dependency is down: the closed list's engine_error, saying
      // what is wrong and what to do, not "Internal error.".
      for (const a of [polled, edit]) {
        const err = a.body.error as { code: string; message: string; hint: string };
        expect(err.code).toBe('engine_error');
        expect(err.message).toMatch(/database is not answering/);
        expect(err.hint).toMatch(/retry the request in a few seconds/i);
      }
      note(
        'PostgreSQL down',
        `GET job ${polled.status} ${(polled.body.error as { code: string }).code} in ${polled.ms} ms, POST edit ${edit.status} in ${edit.ms} ms`,
      );
      await sleep(1_000);
    } finally {
      await pgsrv.startServer();
    }
    const t0 = Date.now();
    const attempts = await expectJobDone(jobId, 'Amount Restarted');
    await expectBatchDone(batch.id, batch.names);
    note(
      'PostgreSQL restarted',
      `job (attempts ${attempts}) and batch done ${Date.now() - t0} ms after the restart`,
    );
    // One charge each for the job and the batch (checked above); none for the edit refused while down.
    expect(await others()).toBe(chargesBefore);
  }, 120_000);

  it('disk full while writing an output: typed 5xx, nothing charged, no half file; jobs fail clearly or re-run', async (ctx) => {
    if (!tmpfs) {
      ctx.skip('no tmpfs could be mounted for DATA_DIR (mount needs root)');
      return;
    }
    // Alone (vitest -t): an API that only queues and one worker, as the cases before leave it.
    if (!api) await startApi({ JOB_WORKERS: '0' });
    const live = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    const worker = live.at(-1) ?? (await startWorker({ JOB_WORKERS: '3' }));
    // The worker is frozen (SIGSTOP) while the jobs are queued and the disk is filled.
    worker.child.kill('SIGSTOP');
    // Temp files that the kills above left (swept after an hour by every process) are not
    // this case's: a failed write must remove its own.
    const temps = () =>
      existsSync(path.join(dataDir, 'blobs'))
        ? readdirSync(path.join(dataDir, 'blobs')).filter((f) => f.startsWith('.tmp-'))
        : [];
    const tempsBefore = new Set(temps());
    const jobId = await submitJob('Amount Due', 'Amount Spaced');
    const batch = await submitBatch(3, 'DiskFull');
    const chargesBefore = (await chargesOf()).length;
    const filler = path.join(dataDir, 'filler');
    const free = () => {
      const s = statfsSync(dataDir);
      return s.bavail * s.bsize;
    };
    writeFileSync(filler, Buffer.alloc(Math.max(0, free() - 16 * 1024)));
    try {
      expect(free()).toBeLessThan(64 * 1024);
      // A sync edit: its output cannot be written; a typed 5xx, and no page charged.
      const sync = await call('POST', '/v1/edit', editBody('Amount Due', 'Amount Full'));
      expectTypedError(sync, [500]);
      expect((await chargesOf()).length).toBe(chargesBefore);
      const t0 = Date.now();
      // The edit job is tried MAX_ATTEMPTS times, then fails with engine_error, uncharged.
      worker.child.kill('SIGCONT');
      const failed = await waitJob(jobId, 40_000);
      expect(failed.status, JSON.stringify(failed)).toBe('failed');
      expect((failed.error as { code: string }).code).toBe('engine_error');
      expect(failed.output).toBeNull();
      expect((await jobRow(jobId)).attempts).toBe(3);
      expect(await chargesOf(jobId)).toEqual([]);
      note(
        'disk full',
        `sync edit ${sync.status} ${(sync.body.error as { code: string }).code} in ${sync.ms} ms, 0 charged; job failed engine_error after 3 attempts, ${Date.now() - t0} ms`,
      );
      // The batch's records are re-run (never finished as done without their output).
      expect((await jobRow(batch.id)).status).not.toBe('done');
    } finally {
      worker.child.kill('SIGCONT');
      rmSync(filler, { force: true });
    }
    // Space is back: the batch finishes, each record's output whole, charged once.
    const t1 = Date.now();
    await expectBatchDone(batch.id, batch.names);
    note('disk space back', `the batch (records re-run) done ${Date.now() - t1} ms later, charged once`);
    // (Another body: the same one would replay the failed job's answer, as idempotency says.)
    const again = await submitJob('Amount Due', 'Amount Respaced');
    await expectJobDone(again, 'Amount Respaced');
    expect((await chargesOf()).length).toBe(chargesBefore + 2);
    expect(temps().filter((f) => !tempsBefore.has(f))).toEqual([]);
    expect(await expectEveryStoredFileWhole()).toBeGreaterThan(0);
  }, 120_000);
});

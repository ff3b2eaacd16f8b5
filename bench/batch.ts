/**
 * Batch throughput (records/s) for a one-page template: one `pdfedit worker` process
 * running its jobs on 1 and then on 2 engine processes (ENGINE_PROCESSES), sharing the
 * database (and Redis when REDIS_URL is set; else the embedded queue on a shared SQLite
 * file). Timed from the job's start to its finish as the database records them (ms), so the
 * time a worker takes to notice the job is excluded.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { buildServer } from '../src/app.js';
import { loadConfig, PROJECT_ROOT } from '../src/config.js';
import { ensureAccount } from '../src/domain/accounts.js';
import { createKey } from '../src/domain/api-keys.js';
import { jobsDb } from '../src/domain/jobs.js';

const CORPUS = path.resolve(PROJECT_ROOT, '..', 'shared', 'corpus');
const TEMPLATE = 'doc-invoice-itextsharp-demo.pdf';
const CLI = path.join(PROJECT_ROOT, 'dist', 'src', 'cli', 'main.js');

export interface BatchBenchRow {
  processes: number;
  records: number;
  seconds: number;
  recordsPerSecond: number;
  /** CPU time per record (ms) of the worker's main process and of its engine processes,
   * from the job's start to its finish as the bench saw them (Linux /proc; NaN elsewhere).
   * Unlike wall time, these hold on a machine shared with other work. */
  mainCpuMs: number;
  engineCpuMs: number;
}

/** CPU time (ms) used so far by process `pid` (utime + stime of /proc/PID/stat); NaN if unknown. */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at state (field 3).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** Linux's USER_HZ: /proc times are in 1/100 s on every architecture Node runs on. */
const CLOCK_TICKS = 100;

/** The process ids of `pid`'s children and their children (the engine processes are
 * exec'd by prlimit in place, so they are the worker's children). */
function descendants(pid: number, depth = 0): number[] {
  if (depth > 3) return [];
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean);
    return kids.map(Number).flatMap((k) => [k, ...descendants(k, depth + 1)]);
  } catch {
    return [];
  }
}

/**
 * CPU ms of the worker since `since` and of its engine processes since each was first seen
 * (an engine process starts with the first record: its start-up is left out, up to one
 * poll's worth). Engine processes seen before are kept in `seen` with their first reading.
 */
function cpuSince(
  worker: ChildProcess,
  since: number,
  seen: Map<number, number>,
): { main: number; engines: number } {
  const pid = worker.pid ?? 0;
  let engines = 0;
  for (const p of descendants(pid)) {
    const now = cpuMs(p);
    if (!seen.has(p)) seen.set(p, now);
    engines += now - seen.get(p)!;
  }
  return { main: cpuMs(pid) - since, engines };
}

async function once(processes: number, records: number, pdf: Buffer): Promise<BatchBenchRow> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'pdfedit-bench-'));
  const prefix = `pdfedit-bench-${randomBytes(4).toString('hex')}`;
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'error',
    ALLOW_PRIVATE_URLS: '1',
    QUEUE_PREFIX: prefix,
    JOB_LEASE_MS: '5000',
    JOB_RECONCILE_MS: '200',
    RATE_LIMIT_FACTOR: '1000',
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
  };
  const server = createServer((_, res) => res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/t.pdf`;
  const api = await buildServer(loadConfig({ ...env, JOB_WORKERS: '0' }));
  const children: ChildProcess[] = [];
  try {
    const account = await ensureAccount(api.db, 'bench@example.com', 'scale');
    const { key } = await createKey(api.db, account.id, 'live');
    children.push(
      spawn(process.execPath, [...nodeFlags(), CLI, 'worker'], {
        env: { ...process.env, ...env, JOB_WORKERS: '2', ENGINE_PROCESSES: String(processes) },
        stdio: ['ignore', process.env.BENCH_LOG_LEVEL ? 'inherit' : 'ignore', 'inherit'],
      }),
    );
    const res = await api.inject({
      method: 'POST',
      url: '/v1/batch',
      headers: { authorization: `Bearer ${key}` },
      payload: {
        template: { url },
        edits: [{ find: 'Bayside Wholesale', replace: '{name} Wholesale' }],
        records: Array.from({ length: records }, (_, i) => ({ name: `Client ${i}` })),
      },
    });
    if (res.statusCode !== 202) throw new Error(`batch refused: ${res.body}`);
    const jobId: string = res.json().job_id;
    // CPU is counted from the poll that first sees the job started.
    let mainAtStart: number | undefined;
    const engineAtStart = new Map<number, number>();
    for (;;) {
      const row = await jobsDb(api.db)
        .selectFrom('jobs')
        .select(['status', 'started_at', 'finished_at'])
        .where('id', '=', jobId)
        .executeTakeFirstOrThrow();
      if (row.finished_at !== null && row.started_at !== null) {
        if (row.status !== 'done') throw new Error(`batch finished ${row.status}`);
        const seconds = (row.finished_at - row.started_at) / 1000;
        const cpu = cpuSince(children[0]!, mainAtStart ?? Number.NaN, engineAtStart);
        return {
          processes,
          records,
          seconds,
          recordsPerSecond: records / seconds,
          mainCpuMs: cpu.main / records,
          engineCpuMs: cpu.engines / records,
        };
      }
      if (row.started_at !== null) {
        mainAtStart ??= cpuMs(children[0]!.pid ?? 0);
        cpuSince(children[0]!, mainAtStart, engineAtStart);
      }
      // Every 20 ms until the job starts (its CPU is counted from then), then every 100 ms:
      // the time is the database's, and each poll (a query, /proc reads) takes CPU from the
      // same two cores, which with 2 engine processes are the ones doing the work.
      await new Promise((r) => setTimeout(r, row.started_at === null ? 20 : 100));
    }
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(
      children.map((c) => new Promise((r) => (c.exitCode === null ? c.once('exit', r) : r(null)))),
    );
    await api.close();
    server.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (process.env.REDIS_URL) await dropQueueKeys(process.env.REDIS_URL, prefix);
  }
}

/** Node flags for the worker process from BENCH_WORKER_NODE_FLAGS (space-separated), for
 * profiling it: `--cpu-prof --cpu-prof-dir=DIR` (NODE_OPTIONS refuses --cpu-prof). */
function nodeFlags(): string[] {
  return (process.env.BENCH_WORKER_NODE_FLAGS ?? '').split(' ').filter(Boolean);
}

/** Removes the bench queue's keys from Redis. */
async function dropQueueKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/**
 * Runs the batch bench: 200 records a run (the size issue 18 measured), with 1, 2, 2 and
 * then 1 engine processes, so both sizes meet the same drift of the machine's load; prints
 * every run, and returns one row per size over both of its runs (records and seconds
 * summed, CPU per record over all its records).
 */
export async function benchBatch(
  records = Number(process.env.BENCH_BATCH_RECORDS || 200),
): Promise<BatchBenchRow[]> {
  if (!existsSync(path.join(CORPUS, TEMPLATE))) {
    console.log('bench batch: the corpus is absent; nothing to measure');
    return [];
  }
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build:ts`);
  const pdf = readFileSync(path.join(CORPUS, TEMPLATE));
  const runs: BatchBenchRow[] = [];
  for (const processes of [1, 2, 2, 1]) runs.push(await once(processes, records, pdf));
  console.log(
    `\nbatch throughput, one-page template, ${process.env.REDIS_URL ? 'BullMQ on Redis' : 'embedded queue'}:`,
  );
  const line = (r: BatchBenchRow, what: string) =>
    console.log(
      `  ${what}${r.processes} engine process(es): ${r.records} records in ${r.seconds.toFixed(1)} s = ${r.recordsPerSecond.toFixed(1)} records/s; CPU per record: ${r.mainCpuMs.toFixed(1)} ms main process, ${r.engineCpuMs.toFixed(1)} ms engine processes`,
    );
  for (const r of runs) line(r, 'run: ');
  const rows = [1, 2].map((processes) => combined(runs.filter((r) => r.processes === processes)));
  for (const r of rows) line(r, 'both runs: ');
  return rows;
}

/** Runs of one pool size as one: records and seconds summed, CPU per record over all. */
function combined(runs: BatchBenchRow[]): BatchBenchRow {
  const records = runs.reduce((n, r) => n + r.records, 0);
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  const per = (f: (r: BatchBenchRow) => number) => runs.reduce((n, r) => n + f(r) * r.records, 0) / records;
  return {
    processes: runs[0]!.processes,
    records,
    seconds,
    recordsPerSecond: records / seconds,
    mainCpuMs: per((r) => r.mainCpuMs),
    engineCpuMs: per((r) => r.engineCpuMs),
  };
}

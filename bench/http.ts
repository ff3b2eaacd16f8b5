/**
 * The service's own cost around the engine (issue 18 items 5 and 6): a real service
 * instance in this process, listening on loopback, answering `POST /v1/edit` (sync) over
 * HTTP on the one-page invoice.
 *
 * - Overhead: wall time of the HTTP exchange (request's bytes sent to the answer's last
 *   byte read, by a client on a thread of its own: bench/http-client.ts; after a warm-up
 *   of `opts.warmup` calls of each kind) minus the
 *   engine's `timings.total_ms` in the answer, median; the document as an uploaded file
 *   (`source.file_id`) and as a multipart upload in the request.
 * - Memory: the service process's resident set over many edits (default 10,000; fewer with
 *   BENCH_RSS_EDITS, and stopped at BENCH_RSS_SECONDS so `npm run bench` stays short), at
 *   the start, after 10 % and at the end, and the engine processes' beside it. Sampled as
 *   the service runs, without forcing a collection: V8 frees its old generation only in a
 *   full (mark-compact) collection, which it runs when that generation reaches a limit it
 *   sets itself, so between two of them the heap, and the resident set with it, grows by
 *   whatever garbage each edit left there; the 10 % and end samples fall anywhere on that
 *   saw-tooth. Beside them, so that garbage and a leak can be told apart: the heap in use
 *   after a full collection the bench forces before the first edit and after the last
 *   (what is retained; the RSS samples are all taken before the last), how many full
 *   collections V8 ran by itself, and the old generation's growth per edit after the first
 *   10 % when it ran none.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Worker } from 'node:worker_threads';
import { buildServer } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { ensureAccount } from '../src/domain/accounts.js';
import { createKey } from '../src/domain/api-keys.js';
import { blobBytesCache } from '../src/store/blob-bytes.js';
import type { ClientAnswer, ClientCall } from './http-client.js';

const MiB = 1024 * 1024;

export interface HttpBench {
  /** Median of (wall − engine total_ms), ms, per source kind. */
  overhead: {
    how: string;
    wallP50: number;
    engineP50: number;
    overheadP50: number;
    overheadP95: number;
    /** CPU time of this process per call (user + system, ms, median): the service's main
     * thread and the HTTP client's thread, with the messages between them (the multipart
     * form is copied to the client each call); less at the mercy of other work than wall time. */
    cpuP50: number;
  }[];
  rss?: RssBench;
}

export interface RssBench {
  editsAsked: number;
  editsDone: number;
  seconds: number;
  /** Resident set of the service process (MiB) before the first edit, after 10 %, at the end. */
  start: number;
  tenth: number;
  end: number;
  /** Where the service's memory is at the same three points (MiB): V8's heap in use, memory
   * outside the heap held by JS objects (Buffers among it), and the stored-blob byte cache. */
  split: {
    at: 'start' | 'tenth' | 'end';
    heapUsed: number;
    heapTotal: number;
    external: number;
    arrayBuffers: number;
    blobCache: number;
    /** Of the resident set: anonymous memory (V8's heap, malloc) and mapped files (code,
     * SQLite's shared WAL index), from /proc/self/status. */
    rssAnon: number;
    rssFile: number;
  }[];
  /** V8's heap in use (MiB) right after a full collection forced by the bench before the first
   * edit and after the last (what the service retains), and the resident set after the last. */
  live: { start: number; end: number; endRss: number };
  /** Full collections V8 ran by itself during the edits. */
  fullGcs: number;
  /** Growth of V8's old generation per edit (bytes) from the 10 % sample to the end, when no
   * full collection ran in between (else undefined): garbage an edit leaves there. */
  oldGenPerEdit?: number;
  /** Resident set of the engine processes at the end (MiB, summed) and how often one was recycled. */
  engineEnd: number;
  recycled: number;
  /** Overhead over the engine (ms, median) of the first and of the last 10 % of the edits:
   * what the service does per edit must not grow with what it has stored and billed. */
  overheadFirst: number;
  overheadLast: number;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

/** A size line of /proc/<pid>/status (bytes), 0 when it cannot be read. */
function procStatus(field: string, pid: number | 'self' = 'self'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Resident set of a process (bytes), 0 when it cannot be read. */
function rssOf(pid: number): number {
  return procStatus('VmRSS', pid);
}

interface EditAnswer {
  status: string;
  timings: { total_ms: number };
}

/** An answer and the wall time of its HTTP exchange (ms). */
interface Timed {
  answer: EditAnswer;
  wall: number;
}

/** Runs the HTTP bench on `pdf` (the one-page invoice) with one replace that applies. */
export async function benchHttp(
  pdf: Buffer,
  edit: { find: string; replace: string },
  opts: { runs: number; warmup: number; rssEdits: number; rssSeconds: number },
): Promise<HttpBench> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'pdfedit-bench-http-'));
  const config = loadConfig({
    ...process.env,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'error',
    RATE_LIMIT_FACTOR: '1000',
    // Only this process's calls: the queue's workers stay off.
    JOB_WORKERS: '0',
  });
  const api = await buildServer(config);
  const client = new Worker(new URL('./http-client.js', import.meta.url));
  try {
    await api.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
    const account = await ensureAccount(api.db, 'bench-http@example.com', 'scale');
    const { key } = await createKey(api.db, account.id, 'live');
    const auth = { authorization: `Bearer ${key}` };
    const fileId = await upload(base, auth, pdf);
    const json = JSON.stringify({ source: { file_id: fileId }, edits: [edit] });
    // A call without Idempotency-Key is keyed by its body, so the same body would be
    // replayed from the record: each call gets a key of its own, as a client retrying
    // safely sends.
    let calls = 0;
    const fresh = () => ({ ...auth, 'idempotency-key': `bench-${process.pid}-${++calls}` });
    // The client runs on a thread of its own (bench/http-client.ts), which also times
    // each call.
    const pending = new Map<number, (a: ClientAnswer) => void>();
    client.on('message', (a: ClientAnswer) => {
      pending.get(a.id)?.(a);
      pending.delete(a.id);
    });
    const post = (headers: Record<string, string>, body: Buffer) =>
      new Promise<Timed>((resolve, reject) => {
        const sent = { ...fresh(), ...headers };
        const id = calls;
        pending.set(id, (a) => {
          if (a.error !== undefined) reject(new Error(`POST /v1/edit failed: ${a.error}`));
          else if (a.status !== 200 || a.replayed) {
            reject(new Error(`POST /v1/edit answered ${a.status} (not a fresh edit): ${a.text}`));
          } else resolve({ answer: JSON.parse(a.text) as EditAnswer, wall: a.wall });
        });
        const call: ClientCall = { id, url: `${base}/v1/edit`, headers: sent, body };
        client.postMessage(call);
      });
    const jsonBody = Buffer.from(json);
    const byFileId = () => post({ 'content-type': 'application/json' }, jsonBody);
    const boundary = `bench${process.pid}`;
    const form = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="invoice.pdf"\r\ncontent-type: application/pdf\r\n\r\n`,
      ),
      pdf,
      Buffer.from(
        `\r\n--${boundary}\r\ncontent-disposition: form-data; name="edits"\r\n\r\n${JSON.stringify([edit])}\r\n--${boundary}--\r\n`,
      ),
    ]);
    const multipart = () => post({ 'content-type': `multipart/form-data; boundary=${boundary}` }, form);
    // Warm-up: engine processes started, the document's open cached, and V8's optimising
    // compiler through the service's hot paths, as in a service that has been answering for
    // a while. After 5 calls of each kind this process still spent about 0.4 ms of CPU per
    // call more than after 200 (process CPU p50, file_id 2.9-3.4 ms against 2.5-2.9 ms, three
    // alternated runs): the overhead of a cold service, not of the service.
    for (let i = 0; i < opts.warmup; i++) {
      await byFileId();
      await multipart();
    }
    // The two kinds alternate call by call, so both meet the same machine load.
    const samples = { file: [] as number[][], multipart: [] as number[][] };
    for (let i = 0; i < opts.runs; i++) {
      for (const [kind, call] of [
        ['file', byFileId],
        ['multipart', multipart],
      ] as const) {
        const c0 = process.cpuUsage();
        const { answer: body, wall } = await call();
        const cpu = process.cpuUsage(c0);
        if (body.status !== 'done') throw new Error(`edit ${body.status}`);
        samples[kind].push([wall, body.timings.total_ms, (cpu.user + cpu.system) / 1000]);
      }
    }
    const overhead = (
      [
        ['source.file_id (stored upload)', samples.file],
        ['multipart (document in the request)', samples.multipart],
      ] as const
    ).map(([how, s]) => {
      const col = (f: (x: number[]) => number) => s.map(f).sort((a, b) => a - b);
      const over = col((x) => x[0]! - x[1]!);
      return {
        how,
        wallP50: quantile(
          col((x) => x[0]!),
          0.5,
        ),
        engineP50: quantile(
          col((x) => x[1]!),
          0.5,
        ),
        overheadP50: quantile(over, 0.5),
        overheadP95: quantile(over, 0.95),
        cpuP50: quantile(
          col((x) => x[2]!),
          0.5,
        ),
      };
    });
    const rss = opts.rssEdits > 0 ? await rssOverEdits(api, byFileId, opts) : undefined;
    return { overhead, ...(rss ? { rss } : {}) };
  } finally {
    await client.terminate();
    await api.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `POST /v1/files` and the PUT of its upload link; the file id. */
async function upload(base: string, auth: Record<string, string>, pdf: Buffer): Promise<string> {
  const res = await fetch(`${base}/v1/files`, { method: 'POST', headers: auth });
  const r = (await res.json()) as { file_id: string; upload_url: string; headers: Record<string, string> };
  const put = await fetch(r.upload_url.replace(/^https?:\/\/[^/]+/, base), {
    method: 'PUT',
    headers: r.headers,
    body: new Uint8Array(pdf),
  });
  if (put.status !== 204) throw new Error(`upload answered ${put.status}: ${await put.text()}`);
  return r.file_id;
}

/** Edits in flight as many as there are engine processes, until the count or the time is reached. */
async function rssOverEdits(
  api: Awaited<ReturnType<typeof buildServer>>,
  call: () => Promise<Timed>,
  opts: { rssEdits: number; rssSeconds: number },
): Promise<RssBench> {
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(Math.round(opts.rssSeconds * 1e9));
  const splitNow = (at: RssBench['split'][number]['at']): RssBench['split'][number] => {
    const m = process.memoryUsage();
    return {
      at,
      heapUsed: m.heapUsed / MiB,
      heapTotal: m.heapTotal / MiB,
      rssAnon: procStatus('RssAnon') / MiB,
      rssFile: (procStatus('RssFile') + procStatus('RssShmem')) / MiB,
      external: m.external / MiB,
      arrayBuffers: m.arrayBuffers / MiB,
      blobCache: blobBytesCache(api.blobs).bytes / MiB,
    };
  };
  // `gc` without starting node with --expose-gc: the flag is read when a new context looks it up.
  v8.setFlagsFromString('--expose-gc');
  const fullGc = vm.runInNewContext('gc') as () => void;
  const oldSpace = () =>
    v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0;
  fullGc();
  const liveStart = process.memoryUsage().heapUsed;
  let fullGcs = 0;
  const gcs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if ((e as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR)
        fullGcs++;
    }
  });
  gcs.observe({ entryTypes: ['gc'] });
  let atTenth: { old: number; fullGcs: number; done: number } | undefined;
  const split = [splitNow('start')];
  const start = process.memoryUsage().rss;
  // RSS every 20 edits: the run may stop at its time limit, so 10 % is of the edits done.
  const samples: [number, number][] = [];
  let done = 0;
  let next = 0;
  const overheads: number[] = [];
  const lane = async (): Promise<void> => {
    while (next < opts.rssEdits && process.hrtime.bigint() < deadline) {
      next++;
      const { answer, wall } = await call();
      overheads.push(wall - answer.timings.total_ms);
      done++;
      if (done % 20 === 0) samples.push([done, process.memoryUsage().rss]);
      if (done === Math.ceil(opts.rssEdits / 10)) {
        split.push(splitNow('tenth'));
        atTenth = { old: oldSpace(), fullGcs, done };
      }
    }
  };
  await Promise.all(Array.from({ length: api.config.engineProcesses }, lane));
  const end = process.memoryUsage().rss;
  split.push(splitNow('end'));
  const oldEnd = oldSpace();
  // The observer's entries arrive asynchronously: let the last ones in before counting.
  await new Promise((r) => setImmediate(r));
  gcs.disconnect();
  const ownFullGcs = fullGcs;
  fullGc();
  const live = {
    start: liveStart / MiB,
    end: process.memoryUsage().heapUsed / MiB,
    endRss: process.memoryUsage().rss / MiB,
  };
  const tail = Math.max(1, Math.floor(overheads.length / 10));
  const median = (v: number[]) =>
    quantile(
      [...v].sort((a, b) => a - b),
      0.5,
    );
  return {
    overheadFirst: median(overheads.slice(0, tail)),
    overheadLast: median(overheads.slice(-tail)),
    editsAsked: opts.rssEdits,
    editsDone: done,
    seconds: ms(started) / 1000,
    start: start / MiB,
    split,
    tenth: (samples.find(([n]) => n >= done / 10)?.[1] ?? end) / MiB,
    end: end / MiB,
    live,
    fullGcs: ownFullGcs,
    ...(atTenth && atTenth.fullGcs === ownFullGcs && done > atTenth.done
      ? { oldGenPerEdit: (oldEnd - atTenth.old) / (done - atTenth.done) }
      : {}),
    engineEnd: api.engine.pids.reduce((n, pid) => n + rssOf(pid), 0) / MiB,
    recycled: api.engine.stats.recycled,
  };
}

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { DocInfo } from '../../native/index.js';
import { ApiError } from '../kernel/api-error.js';
import { isErrorCode } from '../kernel/error-codes.js';
import { OUTPUT_DIR_ENV } from './output-file.js';
import {
  type ProcessMessage,
  type ProcessRequest,
  plainBytes,
  TEMPLATE_MISSING,
  TemplateShelf,
} from './process-protocol.js';
import { PROJECT_ROOT } from './root.js';
import type {
  EditTask,
  EngineEditResult,
  EngineLimits,
  EngineTask,
  EngineText,
  RenderTask,
  TextTask,
  WorkerReply,
} from './tasks.js';
import { type TextJson, type TextReply, textJsonOfReply, textOfReply } from './tasks.js';

/** The compiled engine process entry; it runs plain JS, so tests run after `npm run build:ts`. */
const WORKER_FILE = path.join(PROJECT_ROOT, 'dist', 'src', 'engine', 'process-worker.js');

const MB = 1024 * 1024;

export interface EnginePoolOptions {
  pdfiumLibPath: string;
  /** Engine processes; each binds PDFium once, so N processes render N pages at once. */
  processes: number;
  /** Default budget of one call; past it the process is killed and the caller gets 504. */
  timeoutMs: number;
  /** Calls waiting for a process before new ones are refused with 429. */
  maxQueue?: number;
  /** Address-space ceiling per process in MiB (0: none). An engine process needs about
   * 760 MiB of address space before its first call (V8's reservations and PDFium). */
  memoryMb?: number;
  /** A process whose resident memory passed this (MiB) after a call is recycled. */
  recycleMb?: number;
  /** Address space a process must have left under `memoryMb` after a call (MiB). */
  headroomMb?: number;
  /** The local-disk blob store's directory (`DiskBlobStore.dir`), when the service stores
   * blobs there: its engine processes then write an edit's output themselves under the key
   * the call names (src/engine/output-file.ts). Unset (an object store): outputs come back
   * over the channel. */
  outputDir?: string;
  /** Told of every call a process answered: which process, when it started and ended. */
  onCall?: (trace: CallTrace) => void;
}

export interface CallTrace {
  pid: number;
  op: EngineTask['op'];
  startedAt: number;
  endedAt: number;
  rss: number;
}

export interface EngineStats {
  processes: number;
  busy: number;
  free: number;
  starting: number;
  queued: number;
  completed: number;
  /** How long no engine process has been free while work was waiting or running (ms). */
  saturatedMs: number;
  /** Processes killed at their budget, died mid-call, or recycled for their memory. */
  timedOut: number;
  crashed: number;
  recycled: number;
  /** Of the recycled: processes replaced because a call failed untyped in them (an
   * allocation refused at the ceiling, a panic). */
  failed: number;
}

interface Job {
  id: number;
  task: EngineTask;
  timeoutMs: number;
  resolve: (reply: WorkerReply<unknown>) => void;
  reject: (err: ApiError) => void;
  timer?: NodeJS.Timeout;
  /** A batch template's key: its bytes go to each process once (`TemplateShelf`). */
  template?: string;
}

interface Slot {
  child: ChildProcess;
  ready: boolean;
  /** The calls sent to the process, in the order it runs them: the first runs; a second
   * (a batch record behind a record of the same template, `pump`) waits in its channel. */
  jobs: Job[];
  /** Set once the pool ended the process itself (timeout, recycle, close). */
  retired: boolean;
  /** The templates the process holds (mirrors its own shelf). */
  templates: TemplateShelf<true>;
}

/** Address space an engine process must have left under its ceiling after a call to take
 * the next one. An engine process maps about 825 MiB once it has served (up to about
 * 960 MiB after edits, measured under the hostile suite's 1 GiB ceiling); a process that
 * tried a 30000 x 30000 image was seen failing a 600-pixel preview's bitmap next, or
 * hanging on pdfium-render's lock until its budget ended it. */
const HEADROOM_MB = 64;

/** What each engine budget (crates/pdfedit-engine/src/open/budget/) means, for hints. */
const LIMIT_HINTS: Record<string, string> = {
  stream_bytes: 'one of its streams decompresses past the per-stream limit of your plan',
  document_bytes: 'its streams together decompress past the per-document limit of your plan',
  page_operators: 'a page runs more drawing operators than your plan allows',
  form_depth: 'its form XObjects nest deeper than your plan allows',
  form_draws: 'a page draws form XObjects more often than your plan allows',
  page_tree: 'its page tree lists pages that the readers count differently (a cycle or a page listed twice)',
  page_size:
    'a page is larger than 144,000 units a side (MediaBox or CropBox times UserUnit; ten times the 14,400 of ISO 32000 Annex C), or its size is not a finite number',
};

/** Limits that are the same on every plan: a paid plan does not raise them. */
const SAME_ON_EVERY_PLAN = new Set(['page_tree', 'page_size']);

/** The hint of a refusal by an engine budget (the message starts `limit <name>:`). */
function limitHint(message: string): { hint?: string } {
  const name = /limit (\w+):/.exec(message)?.[1];
  const what = name ? LIMIT_HINTS[name] : undefined;
  if (!name || !what) return {};
  const plans = SAME_ON_EVERY_PLAN.has(name) ? '' : ', or use a paid plan, whose limits are higher';
  return {
    hint: `The document exceeds the engine limit ${name}: ${what}. Repair or simplify the PDF (for example print it to a new PDF)${plans}.`,
  };
}

/**
 * glibc's allocator settings for an engine process. Every verification render allocates a
 * page bitmap and its RGB copy (about 8 and 6 MB for a letter page at 2 px/pt). By default
 * glibc maps such a block fresh and unmaps it on free, so each render paid for zeroing
 * every page of it again in the kernel: 40% of a one-page edit's CPU (perf). Blocks up to
 * 32 MB (glibc's largest mmap threshold) now come from the heap, and up to 64 MB of free
 * heap stays mapped for the next render; larger blocks (a huge page's raster) are still
 * mapped and returned at once. The process's resident memory is bounded as before by the
 * pool's recycling. At most 2 malloc arenas: each further thread that allocated at once
 * (V8's and libuv's helpers, PDFium) reserved another 64 MiB of address space, so a
 * process's address space after a call varied by 64 MiB steps (889, 953 or 1017 MiB for
 * the same open) and the near-the-ceiling check below retired healthy processes at random;
 * the engine's work runs on one thread. Operator settings in GLIBC_TUNABLES win (ours go first, later wins);
 * other C libraries ignore the variable.
 */
const MALLOC_TUNABLES =
  'glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864:glibc.malloc.arena_max=2';

export function withMallocTunables(current: string | undefined): string {
  return current ? `${MALLOC_TUNABLES}:${current}` : MALLOC_TUNABLES;
}

/** `prlimit` from util-linux, when present: the ceiling without a shell in between. */
function findPrlimit(): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    const p = path.join(dir || '.', 'prlimit');
    if (existsSync(p)) return p;
  }
  return undefined;
}

/**
 * Runs engine calls in child processes, one call at a time per process.
 *
 * Why not Piscina (the previous front of this pool): Piscina 5 only drives
 * `node:worker_threads` Workers (its pool constructs `Worker` and talks over a
 * `MessageChannel`; there is no process mode). Threads share one PDFium, which serialises
 * every call behind one lock, so two threads never render at once; a thread cannot be
 * ended inside a native call without taking Node down, so a call past its budget kept its
 * thread and its memory. Processes fix all three: each binds its own PDFium, a call past
 * its budget ends by SIGKILL of its process, and each has its own memory ceiling.
 *
 * The memory ceiling is an address-space limit (RLIMIT_AS via prlimit, or `ulimit -v` in
 * /bin/sh where prlimit is missing) rather than a cgroup (needs root and a writable cgroup
 * tree) or an RSS watchdog (polling lets a fast bomb overshoot by gigabytes). Measured on
 * Node 20 x64: an engine process maps about 760 MiB before its first call (V8 reserves its
 * heap and code ranges up front), fails to start under 600 MiB and serves renders at 800
 * MiB; the default is 2 GiB. Past the ceiling an allocation fails, the process aborts, and
 * only its own call answers 500 engine_error. The V8 heap is capped too (the engine's
 * memory is native; the JS side only moves buffers).
 */
export class EnginePool {
  private readonly opts: Required<Omit<EnginePoolOptions, 'onCall' | 'outputDir'>> &
    Pick<EnginePoolOptions, 'onCall' | 'outputDir'>;
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];
  private readonly prlimit = findPrlimit();
  private nextId = 1;
  /** A key per template object a batch's records share (the same Buffer, the same key). */
  private readonly templateKeys = new WeakMap<Uint8Array, string>();
  private nextTemplate = 1;
  /** Calls sent without their document's bytes (the process held the template). */
  private templateReuses = 0;
  private closed = false;
  /** Set by the first call: from then on the pool keeps its processes running. */
  private started = false;
  /** Processes that died before they were ready, in a row. */
  private startFailures = 0;
  private completed = 0;
  private timedOut = 0;
  private crashed = 0;
  private recycled = 0;
  private failed = 0;
  /** Epoch ms since when no process has been free while work was in the pool (or null). */
  private saturatedSince: number | null = null;

  constructor(opts: EnginePoolOptions) {
    if (!existsSync(WORKER_FILE)) {
      throw new Error(`engine process entry not built (${WORKER_FILE}): run npm run build`);
    }
    if (!existsSync(opts.pdfiumLibPath)) {
      throw new Error(`PDFium library not found at ${opts.pdfiumLibPath}: run scripts/setup.sh`);
    }
    const processes = Math.max(1, Math.floor(opts.processes));
    this.opts = {
      pdfiumLibPath: opts.pdfiumLibPath,
      processes,
      timeoutMs: opts.timeoutMs,
      maxQueue: opts.maxQueue ?? Math.max(8, processes * 16),
      memoryMb: opts.memoryMb ?? 2048,
      recycleMb: opts.recycleMb ?? 400,
      headroomMb: opts.headroomMb ?? HEADROOM_MB,
      onCall: opts.onCall,
      outputDir: opts.outputDir !== undefined ? path.resolve(opts.outputDir) : undefined,
    };
  }

  /** Where the engine processes write outputs themselves (see `EnginePoolOptions.outputDir`). */
  get outputDir(): string | undefined {
    return this.opts.outputDir;
  }

  /** Default budget of a call, in ms. */
  get timeoutMs(): number {
    return this.opts.timeoutMs;
  }

  private spawnProcess(): Slot {
    const node = [process.execPath, '--max-old-space-size=512', WORKER_FILE];
    const env = {
      ...process.env,
      PDFEDIT_PDFIUM_LIB: this.opts.pdfiumLibPath,
      GLIBC_TUNABLES: withMallocTunables(process.env.GLIBC_TUNABLES),
      [OUTPUT_DIR_ENV]: this.opts.outputDir ?? '',
    };
    const ceiling = this.opts.memoryMb > 0 ? this.opts.memoryMb * MB : 0;
    const [cmd, ...args] =
      ceiling === 0
        ? node
        : this.prlimit
          ? [this.prlimit, `--as=${ceiling}`, '--', ...node]
          : ['/bin/sh', '-c', `ulimit -v ${ceiling / 1024} && exec "$@"`, 'sh', ...node];
    const child = spawn(cmd!, args, {
      env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    const slot: Slot = {
      child,
      ready: false,
      jobs: [],
      retired: false,
      templates: new TemplateShelf<true>(),
    };
    this.slots.add(slot);
    child.on('message', (msg: ProcessMessage) => this.onMessage(slot, msg));
    child.on('exit', () => this.onExit(slot));
    child.on('error', () => this.onExit(slot));
    return slot;
  }

  private onMessage(slot: Slot, msg: ProcessMessage): void {
    if (msg.kind === 'ready') {
      slot.ready = true;
      this.startFailures = 0;
      this.pump();
      return;
    }
    const job = slot.jobs[0];
    if (!job || job.id !== msg.id) return;
    slot.jobs.shift();
    if (!msg.reply.ok && msg.reply.code === TEMPLATE_MISSING) {
      // The process does not hold the template after all: the same call, with its bytes,
      // behind what the process already holds (a call waiting there now runs first).
      slot.templates.clear();
      slot.jobs.push(job);
      this.send(slot, job);
      this.startTimer(slot, slot.jobs[0]!);
      return;
    }
    clearTimeout(job.timer);
    this.completed++;
    this.opts.onCall?.({
      pid: slot.child.pid ?? 0,
      op: job.task.op,
      startedAt: msg.startedAt,
      endedAt: msg.endedAt,
      rss: msg.rss,
    });
    // A call that grew the process is its last: memory goes back to the baseline with it.
    // So is a call that failed untyped (a panic, PDFium failing an allocation under the
    // address-space ceiling): such a failure can leave the process's PDFium state, and
    // pdfium-render's global lock, held, and the next call on it would hang until its
    // budget ends it.
    const failed = !msg.reply.ok && !(isErrorCode(msg.reply.code) && msg.reply.code !== 'engine_error');
    // And so is a call after which the process's address space is within HEADROOM_MB of its
    // ceiling: PDFium keeps a huge image's reservation mapped (resident memory falls back,
    // so the recycle above misses it), and the next call's bitmaps then fail to allocate.
    const ceiling = this.opts.memoryMb * MB;
    const cornered = ceiling > 0 && msg.vsize > ceiling - this.opts.headroomMb * MB;
    if (msg.rss > this.opts.recycleMb * MB || failed || cornered) {
      this.recycled++;
      if (failed) this.failed++;
      this.retire(slot);
    } else if (slot.jobs[0]) {
      // The call that waited behind this one runs now: its budget starts.
      this.startTimer(slot, slot.jobs[0]);
    }
    job.resolve(msg.reply);
    this.pump();
  }

  private onExit(slot: Slot): void {
    if (!this.slots.delete(slot)) return;
    const [job, ...waiting] = slot.jobs.splice(0);
    this.handBack(waiting);
    if (job) {
      clearTimeout(job.timer);
      this.crashed++;
      // Died mid-call (memory ceiling, a crash in the engine): this request only.
      job.reject(new ApiError('engine_error', 'The engine failed on this document.'));
    } else if (!slot.ready && !slot.retired && !this.closed) {
      // Died before it was ready (a ceiling too low, a broken install): fail one waiting
      // call rather than respawning in a loop.
      this.startFailures++;
      const head = this.queue.shift();
      head?.reject(new ApiError('engine_error', 'The engine could not start.'));
    }
    this.pump();
  }

  /** Ends the process; the calls still sent to it (not the one being failed or answered,
   * which the caller took out) run on another process. */
  private retire(slot: Slot): void {
    slot.retired = true;
    this.handBack(slot.jobs.splice(0));
    slot.child.kill('SIGKILL');
  }

  /**
   * Calls that waited in a process that ended, back at the head of the queue in their order.
   * A call that waited had not started, unless the process was recycled after the call
   * before it answered: then it is cut short and runs again elsewhere (an engine call has no
   * effect but its answer, and an output it wrote is replaced whole: output-file.ts).
   */
  private handBack(jobs: Job[]): void {
    for (const job of jobs) {
      clearTimeout(job.timer);
      job.timer = undefined;
    }
    if (this.closed) {
      for (const job of jobs) job.reject(new ApiError('engine_error', 'The engine is shutting down.'));
      return;
    }
    this.queue.unshift(...jobs);
  }

  private pump(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (this.queue.length === 0) break;
      if (!slot.ready || slot.jobs.length > 0 || slot.retired) continue;
      this.dispatch(slot, this.queue.shift()!);
    }
    // A batch record at the head of the queue goes to a process running a record of the
    // same template, to wait in its channel: the process starts it as soon as it answers,
    // instead of idling until this process has handled the answer and sent the next call
    // (this process is busy with other records' store writes meanwhile: in the batch bench
    // with two engine processes, each was idle about a sixth of the time). Only behind the
    // same template, whose records cost about the same, so
    // a record never waits long behind a call that another process would have started
    // sooner; one at most; the queue's order is kept.
    for (const slot of this.slots) {
      const head = this.queue[0];
      if (head?.template === undefined) break;
      if (!slot.ready || slot.retired || slot.jobs.length !== 1) continue;
      if (slot.jobs[0]!.template !== head.template) continue;
      this.queue.shift();
      slot.jobs.push(head);
      this.send(slot, head);
    }
    // Keep the pool at its size: replace what was killed, start what is missing (the first
    // call starts them all, so a service that never edits never spawns an engine).
    const live = [...this.slots].filter((s) => !s.retired).length;
    if (this.started && (this.queue.length > 0 || this.startFailures < 3)) {
      for (let n = live; n < this.opts.processes; n++) this.spawnProcess();
    }
    this.trackSaturation();
  }

  private dispatch(slot: Slot, job: Job): void {
    slot.jobs.push(job);
    this.startTimer(slot, job);
    this.send(slot, job);
  }

  /** Starts the budget of the call the process runs now (once). */
  private startTimer(slot: Slot, job: Job): void {
    if (job.timer !== undefined) return;
    job.timer = setTimeout(() => {
      if (slot.jobs[0] !== job) {
        // Sent again behind another call (TEMPLATE_MISSING): its budget starts over when it runs.
        job.timer = undefined;
        return;
      }
      slot.jobs.shift();
      this.timedOut++;
      this.retire(slot);
      job.reject(new ApiError('engine_timeout', `The engine did not finish within ${job.timeoutMs} ms.`));
    }, job.timeoutMs);
  }

  /** Sends the job's task to its process: a template the process holds goes without bytes. */
  private send(slot: Slot, job: Job): void {
    let task = plainBytes(job.task);
    let template: string | undefined;
    if (job.template !== undefined) {
      template = job.template;
      if (slot.templates.has(template)) {
        task = { ...task, pdf: new Uint8Array(0) };
        this.templateReuses++;
      } else {
        slot.templates.put(template, true, task.pdf.byteLength);
      }
    }
    const req: ProcessRequest = { id: job.id, task, ...(template !== undefined ? { template } : {}) };
    slot.child.send(req, (err) => {
      const at = slot.jobs.indexOf(job);
      if (!err || at < 0) return;
      // The channel broke (the process is gone): this call fails as a crash did before.
      slot.jobs.splice(at, 1);
      clearTimeout(job.timer);
      this.crashed++;
      this.retire(slot);
      job.reject(new ApiError('engine_error', 'The engine failed on this document.'));
    });
  }

  private trackSaturation(): void {
    const live = [...this.slots].filter((s) => !s.retired);
    const free = live.some((s) => s.ready && s.jobs.length === 0);
    const working = this.queue.length > 0 || live.some((s) => s.jobs.length > 0);
    if (free || !working) this.saturatedSince = null;
    else this.saturatedSince ??= Date.now();
  }

  /**
   * Starts the pool's processes now instead of on the first call: a `pdfedit worker`
   * exists to run jobs, so it starts them at boot and its first batch does not wait for
   * them (each binds PDFium: ~0.1 s of CPU). Calls find them ready, or starting.
   */
  start(): void {
    if (this.closed) return;
    this.started = true;
    this.pump();
  }

  private async run<T>(task: EngineTask, timeoutMs = this.opts.timeoutMs, template?: string): Promise<T> {
    if (this.closed) throw new ApiError('engine_error', 'The engine is shutting down.');
    if (this.queue.length >= this.opts.maxQueue) {
      throw new ApiError('rate_limited', 'The engine is busy; retry shortly.', {
        headers: { 'Retry-After': '2' },
      });
    }
    this.started = true;
    const reply = await new Promise<WorkerReply<unknown>>((resolve, reject) => {
      this.queue.push({
        id: this.nextId++,
        task,
        timeoutMs,
        resolve,
        reject,
        ...(template !== undefined ? { template } : {}),
      });
      this.pump();
    });
    if (reply.ok) return reply.value as T;
    const code = isErrorCode(reply.code) ? reply.code : 'engine_error';
    if (code === 'engine_error') throw new ApiError(code, 'The engine failed on this document.');
    throw new ApiError(code, reply.message, limitHint(reply.message));
  }

  open(pdf: Uint8Array, password?: string, timeoutMs?: number, limits?: EngineLimits): Promise<DocInfo> {
    return this.run<DocInfo>(
      { op: 'open', pdf, ...(password !== undefined ? { password } : {}), ...(limits ? { limits } : {}) },
      timeoutMs,
    );
  }

  async readText(task: Omit<TextTask, 'op'>, timeoutMs?: number): Promise<EngineText> {
    return textOfReply(await this.run<TextReply>({ op: 'text', ...task }, timeoutMs));
  }

  /** `readText`'s answer as JSON text, not parsed here (`textJsonOfReply`). */
  async readTextJson(task: Omit<TextTask, 'op'>, timeoutMs?: number): Promise<TextJson> {
    return textJsonOfReply(await this.run<TextReply>({ op: 'text', ...task }, timeoutMs));
  }

  async render(task: Omit<RenderTask, 'op'>, timeoutMs?: number): Promise<Buffer> {
    const bytes = await this.run<Uint8Array>({ op: 'render', ...task }, timeoutMs);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /**
   * `timeoutMs` replaces the pool's budget for this call (jobs get a longer one than sync
   * requests). A batch record (`options.template_cache`) sends its document's bytes to each
   * engine process once: the records of a batch pass the same template object, and a
   * process that already holds it gets the call without them. The caller must not change
   * the bytes of a template it passed (a different object is a different template).
   */
  edit(task: Omit<EditTask, 'op'>, timeoutMs?: number): Promise<EngineEditResult> {
    const template = task.options?.template_cache ? this.templateKey(task.pdf) : undefined;
    return this.run<EngineEditResult>({ op: 'edit', ...task }, timeoutMs, template);
  }

  private templateKey(pdf: Uint8Array): string {
    let key = this.templateKeys.get(pdf);
    if (key === undefined) {
      key = String(this.nextTemplate++);
      this.templateKeys.set(pdf, key);
    }
    return key;
  }

  /** Calls sent without their template's bytes, the process holding them (tests). */
  get templatesReused(): number {
    return this.templateReuses;
  }

  get stats(): EngineStats {
    this.trackSaturation();
    const live = [...this.slots].filter((s) => !s.retired);
    const busy = live.filter((s) => s.jobs.length > 0).length;
    const starting = live.filter((s) => !s.ready).length;
    return {
      processes: live.length,
      busy,
      free: live.length - busy - starting,
      starting,
      queued: this.queue.length,
      completed: this.completed,
      saturatedMs: this.saturatedSince === null ? 0 : Date.now() - this.saturatedSince,
      timedOut: this.timedOut,
      crashed: this.crashed,
      recycled: this.recycled,
      failed: this.failed,
    };
  }

  /** The engine process ids (tests and diagnostics). */
  get pids(): number[] {
    return [...this.slots].filter((s) => !s.retired && s.child.pid).map((s) => s.child.pid!);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) {
      job.reject(new ApiError('engine_error', 'The engine is shutting down.'));
    }
    const exits = [...this.slots].map(
      (slot) =>
        new Promise<void>((resolve) => {
          if (slot.child.exitCode !== null || slot.child.signalCode !== null) return resolve();
          slot.child.once('exit', () => resolve());
          this.retire(slot);
        }),
    );
    await Promise.all(exits);
  }
}

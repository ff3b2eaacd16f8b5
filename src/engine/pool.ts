import { existsSync } from 'node:fs';
import path from 'node:path';
import { Piscina } from 'piscina';
import { PROJECT_ROOT } from '../config.js';
import { ApiError } from '../kernel/api-error.js';
import { isErrorCode } from '../kernel/error-codes.js';
import type {
  DocInfo,
  EditTask,
  EngineEditResult,
  EngineTask,
  RenderTask,
  TextTask,
  WorkerReply,
} from './types.js';

/** The compiled worker; piscina loads plain JS, so tests run after `npm run build:ts`. */
const WORKER_FILE = path.join(PROJECT_ROOT, 'dist', 'src', 'engine', 'worker.js');

export interface EnginePoolOptions {
  pdfiumLibPath: string;
  threads: number;
  /** Budget of one call; past it the caller gets 504 engine_timeout. */
  timeoutMs: number;
  /** Tasks waiting for a thread before new ones are refused with 429. */
  maxQueue?: number;
}

/**
 * Runs engine calls on worker threads. PDFium serialises its own calls behind one mutex,
 * so threads overlap only the pure-Rust parts; parallel rendering needs processes (later).
 *
 * A timed-out call is not aborted: terminating a thread inside a native call crashes
 * Node (DESIGN.md), so the answer is 504 while the thread finishes and its result is dropped.
 */
export class EnginePool {
  private readonly piscina: Piscina;
  private readonly timeoutMs: number;

  constructor(opts: EnginePoolOptions) {
    if (!existsSync(WORKER_FILE)) {
      throw new Error(`engine worker not built (${WORKER_FILE}): run npm run build`);
    }
    if (!existsSync(opts.pdfiumLibPath)) {
      throw new Error(`PDFium library not found at ${opts.pdfiumLibPath}: run scripts/setup.sh`);
    }
    this.timeoutMs = opts.timeoutMs;
    this.piscina = new Piscina({
      filename: WORKER_FILE,
      minThreads: 1,
      maxThreads: Math.max(1, opts.threads),
      maxQueue: opts.maxQueue ?? Math.max(8, opts.threads * 16),
      idleTimeout: 60_000,
      workerData: { pdfiumLibPath: opts.pdfiumLibPath },
    });
  }

  private async run<T>(task: EngineTask, timeoutMs = this.timeoutMs): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new ApiError('engine_timeout', `The engine did not finish within ${timeoutMs} ms.`)),
        timeoutMs,
      );
    });
    let reply: WorkerReply<T>;
    try {
      reply = await Promise.race([this.piscina.run(task) as Promise<WorkerReply<T>>, timeout]);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if ((err as Error)?.message?.includes('Task queue is at limit')) {
        throw new ApiError('rate_limited', 'The engine is busy; retry shortly.', {
          headers: { 'Retry-After': '2' },
        });
      }
      throw new ApiError('engine_error', 'The engine failed on this document.', { cause: err });
    } finally {
      clearTimeout(timer);
    }
    if (reply.ok) return reply.value;
    const code = isErrorCode(reply.code) ? reply.code : 'engine_error';
    throw new ApiError(code, code === 'engine_error' ? 'The engine failed on this document.' : reply.message);
  }

  open(pdf: Uint8Array, password?: string): Promise<DocInfo> {
    return this.run<DocInfo>({ op: 'open', pdf, ...(password !== undefined ? { password } : {}) });
  }

  readText<T = unknown>(task: Omit<TextTask, 'op'>): Promise<T> {
    return this.run<T>({ op: 'text', ...task });
  }

  async render(task: Omit<RenderTask, 'op'>): Promise<Buffer> {
    const bytes = await this.run<Uint8Array>({ op: 'render', ...task });
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** `timeoutMs` replaces the pool's budget for this call (jobs get a longer one than sync requests). */
  edit(task: Omit<EditTask, 'op'>, timeoutMs?: number): Promise<EngineEditResult> {
    return this.run<EngineEditResult>({ op: 'edit', ...task }, timeoutMs);
  }

  get stats() {
    return {
      threads: this.piscina.threads.length,
      queued: this.piscina.queueSize,
      completed: this.piscina.completed,
    };
  }

  close(): Promise<void> {
    return this.piscina.destroy();
  }
}

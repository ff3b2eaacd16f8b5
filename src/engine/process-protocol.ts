import type { EngineTask, WorkerReply } from './tasks.js';

/**
 * Messages between the pool and an engine process, over the IPC channel with Node's
 * 'advanced' serialization (structured clone: PDF bytes travel as binary, never base64).
 */
export interface ProcessRequest {
  id: number;
  task: EngineTask;
  /** A batch template the process keeps between calls (see `TemplateShelf`): with bytes in
   * `task.pdf`, they are put on the process's shelf under this key; with an empty
   * `task.pdf`, the shelf's bytes of this key are the task's document. */
  template?: string;
}

/** The reply code of a call whose template is not on the process's shelf (the pool then
 * sends the call again with the bytes; never an answer to a caller). */
export const TEMPLATE_MISSING = 'template_missing';

/** Templates kept per process, least recently used first out. */
export const TEMPLATE_SHELF_SIZE = 4;
/** A template larger than this is sent with every call (never kept). */
export const TEMPLATE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The batch templates an engine process holds, so that a batch's records send their
 * template's bytes to each process once instead of with every record (issue 18 item 3: a
 * 76 KB template serialised per record was a tenth of the worker's CPU per record). The
 * pool keeps one shelf per process mirroring the process's own: both see the same calls
 * in the same order and apply the same rules (at most TEMPLATE_SHELF_SIZE keys, least
 * recently used out, none over TEMPLATE_MAX_BYTES), so the pool knows what the process
 * holds. Should they ever disagree, the process answers TEMPLATE_MISSING and the pool
 * sends the bytes.
 */
export class TemplateShelf<T> {
  private readonly held = new Map<string, T>();

  /** Whether the bytes of `key` are kept (and marks them used). */
  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** The value kept under `key`, marked used. */
  get(key: string): T | undefined {
    const v = this.held.get(key);
    if (v === undefined) return undefined;
    this.held.delete(key);
    this.held.set(key, v);
    return v;
  }

  /** Keeps `value` (of `byteLength` bytes) under `key` when small enough; evicts the oldest. */
  put(key: string, value: T, byteLength: number): void {
    this.held.delete(key);
    if (byteLength > TEMPLATE_MAX_BYTES) return;
    this.held.set(key, value);
    while (this.held.size > TEMPLATE_SHELF_SIZE) this.held.delete(this.held.keys().next().value!);
  }

  clear(): void {
    this.held.clear();
  }

  get size(): number {
    return this.held.size;
  }
}

export type ProcessMessage =
  | { kind: 'ready'; pid: number }
  | {
      kind: 'reply';
      id: number;
      reply: WorkerReply<unknown>;
      /** Wall-clock epoch ms (fractional) when the process started and ended the task. */
      startedAt: number;
      endedAt: number;
      /** Resident set size of the process after the task, in bytes. */
      rss: number;
      /** Mapped address space of the process after the task (VmSize), in bytes; 0 if unknown. */
      vsize: number;
    };

/**
 * A value with every Buffer in it (top level, in arrays, in plain objects) replaced by a
 * plain Uint8Array over the same bytes, no copy. Node's serializer writes a Buffer about
 * seven times slower than a Uint8Array of the same bytes (measured on Node 20: 190 µs
 * against 25 µs for a 77 KB PDF; the same bytes arrive either way), and every engine call
 * sends its document one way and an edit's output back. What arrives is a Uint8Array in
 * both cases (tasks.ts `Cloned`). Depth-bounded: engine values are shallow.
 */
export function plainBytes<T>(value: T, depth = 0): T {
  if (value instanceof Uint8Array) {
    return (
      Buffer.isBuffer(value) ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength) : value
    ) as T;
  }
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = plainBytes(value[i], depth + 1);
      if (v === value[i]) continue;
      out ??= [...value];
      out[i] = v;
    }
    return (out ?? value) as T;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    const p = plainBytes(v, depth + 1);
    if (p === v) continue;
    out ??= { ...(value as Record<string, unknown>) };
    out[k] = p;
  }
  return (out ?? value) as T;
}

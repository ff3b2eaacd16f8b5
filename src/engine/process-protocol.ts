import type { EngineTask, WorkerReply } from './tasks.js';

/**
 * Messages between the pool and an engine process, over the IPC channel with Node's
 * 'advanced' serialization (structured clone: PDF bytes travel as binary, never base64).
 */
export interface ProcessRequest {
  id: number;
  task: EngineTask;
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

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

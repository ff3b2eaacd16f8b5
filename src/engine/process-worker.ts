/**
 * Entry of one engine process (forked by src/engine/pool.ts): binds PDFium once, then runs
 * one task at a time as the pool sends them. The pool kills it at the call's budget or when
 * its memory grew past the recycle threshold; the address-space ceiling is set by the
 * spawn (prlimit), so an allocation past it fails inside this process only.
 */
import { readFileSync } from 'node:fs';
import { OUTPUT_DIR_ENV, writeOutputFile } from './output-file.js';
import {
  type ProcessMessage,
  type ProcessRequest,
  plainBytes,
  TEMPLATE_MISSING,
  TemplateShelf,
} from './process-protocol.js';
import type { EngineEditResult, EngineTask, WorkerReply } from './tasks.js';
import { initEngine, runTask } from './worker.js';

function send(msg: ProcessMessage): void {
  // The pool may be gone while a call ran (its API process ended): then so does this one.
  if (!process.connected) process.exit(0);
  process.send?.(msg, undefined, {}, (err: Error | null) => {
    if (err) process.exit(0);
  });
}

const libPath = process.env.PDFEDIT_PDFIUM_LIB;
if (!libPath || !process.send) {
  console.error('engine process: started without PDFEDIT_PDFIUM_LIB or an IPC channel');
  process.exit(2);
}
initEngine(libPath);

/** Batch templates sent once (the pool mirrors this shelf: process-protocol.ts). */
const templates = new TemplateShelf<Uint8Array>();

/** The task with its template's bytes: put on the shelf when sent, taken from it when not. */
function withTemplate(msg: ProcessRequest): EngineTask | undefined {
  const { task, template } = msg;
  if (template === undefined) return task;
  if (task.pdf.byteLength > 0) {
    templates.put(template, task.pdf, task.pdf.byteLength);
    return task;
  }
  const pdf = templates.get(template);
  return pdf ? { ...task, pdf } : undefined;
}

process.on('message', (msg: ProcessRequest) => {
  const startedAt = performance.timeOrigin + performance.now();
  const task = withTemplate(msg);
  const missing: WorkerReply<unknown> = { ok: false, code: TEMPLATE_MISSING, message: 'template not kept' };
  const reply = task ? plainBytes(withOutputWritten(task, runTask(task))) : missing;
  const endedAt = performance.timeOrigin + performance.now();
  send({
    kind: 'reply',
    id: msg.id,
    reply,
    startedAt,
    endedAt,
    rss: process.memoryUsage.rss(),
    vsize: vsize(),
  });
});
/** The blob directory this process writes outputs to (set by the pool for a disk store). */
const outputDir = process.env[OUTPUT_DIR_ENV] || undefined;

/**
 * An edit that changed its document, with an output key: its bytes written under the key
 * here (src/engine/output-file.ts), the reply carrying only their size and digest. Should
 * the write fail (disk full), the reply keeps the bytes and the API process writes them as
 * before (and answers the failure typed, charging nothing).
 */
function withOutputWritten(task: EngineTask, reply: WorkerReply<unknown>): WorkerReply<unknown> {
  if (task.op !== 'edit' || task.output === undefined || outputDir === undefined || !reply.ok) return reply;
  const result = reply.value as EngineEditResult;
  if (result.changes.length === 0 && result.removed.length === 0) return reply;
  try {
    const written = writeOutputFile(outputDir, task.output, result.pdf);
    return { ok: true, value: { ...result, pdf: new Uint8Array(0), written } };
  } catch {
    return reply;
  }
}

// The pool went away (the API process died or closed the channel): end with it.
process.on('disconnect', () => process.exit(0));
send({ kind: 'ready', pid: process.pid });

/** The process's mapped address space (VmSize, bytes): what the address-space ceiling
 * counts. PDFium's allocator keeps what it reserved for a huge image mapped after the
 * call, while resident memory falls back; 0 where /proc is missing. */
function vsize(): number {
  try {
    const m = /VmSize:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

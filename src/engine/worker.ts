import { createRequire } from 'node:module';
import path from 'node:path';
import { workerData } from 'node:worker_threads';
import { PROJECT_ROOT } from '../config.js';
import type { EngineEditResult, EngineTask, WorkerReply } from './types.js';

/** The napi addon's surface as this worker uses it (full types: native/index.d.ts). */
interface NativeEngine {
  init(pdfiumLibPath: string): void;
  openInfo(pdf: Buffer, password?: string | null): unknown;
  readText(pdf: Buffer, options: Record<string, unknown>): unknown;
  render(pdf: Buffer, options: Record<string, unknown>): Buffer;
  edit(pdf: Buffer, request: Record<string, unknown>): EngineEditResult;
}

const require = createRequire(import.meta.url);
const native = require(path.join(PROJECT_ROOT, 'native', 'index.js')) as NativeEngine;
// PDFium binds once per process; init is idempotent, so every worker thread may call it.
native.init((workerData as { pdfiumLibPath: string }).pdfiumLibPath);

function call(task: EngineTask): unknown {
  const pdf = Buffer.from(task.pdf.buffer, task.pdf.byteOffset, task.pdf.byteLength);
  switch (task.op) {
    case 'open':
      return native.openInfo(pdf, task.password ?? null);
    case 'text':
      return native.readText(pdf, {
        password: task.password,
        pages: task.pages,
        text: task.text,
        forms: task.forms,
      });
    case 'render': {
      const png = native.render(pdf, {
        password: task.password,
        page: task.page,
        region: task.region,
        highlights: task.highlights,
        width: task.width,
        maxBytes: task.maxBytes,
      });
      return new Uint8Array(png.buffer, png.byteOffset, png.byteLength);
    }
    case 'edit':
      return native.edit(pdf, { password: task.password, edits: task.edits, options: task.options });
  }
}

export default function run(task: EngineTask): WorkerReply<unknown> {
  try {
    return { ok: true, value: call(task) };
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    return {
      ok: false,
      code: typeof e?.code === 'string' ? e.code : 'engine_error',
      message: typeof e?.message === 'string' ? e.message : 'engine failure',
    };
  }
}

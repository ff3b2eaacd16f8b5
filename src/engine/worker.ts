import { createRequire } from 'node:module';
import path from 'node:path';
import { PROJECT_ROOT } from './root.js';
import type { EngineEditResult, EngineTask, WorkerReply } from './types.js';

/** The napi addon's surface as the engine process uses it (full types: native/index.d.ts). */
interface NativeEngine {
  init(pdfiumLibPath: string): void;
  openInfo(pdf: Buffer, password?: string | null, limits?: Record<string, number> | null): unknown;
  readText(pdf: Buffer, options: Record<string, unknown>): unknown;
  readTextOcr(pdf: Buffer, options: Record<string, unknown>): unknown;
  render(pdf: Buffer, options: Record<string, unknown>): Buffer;
  edit(pdf: Buffer, request: Record<string, unknown>): EngineEditResult;
}

let native: NativeEngine | undefined;

/** Loads the addon and binds PDFium: once per engine process (src/engine/process-worker.ts). */
export function initEngine(pdfiumLibPath: string): void {
  if (native) return;
  const require = createRequire(import.meta.url);
  const loaded = require(path.join(PROJECT_ROOT, 'native', 'index.js')) as NativeEngine;
  loaded.init(pdfiumLibPath);
  native = loaded;
}

function call(engine: NativeEngine, task: EngineTask): unknown {
  const pdf = Buffer.from(task.pdf.buffer, task.pdf.byteOffset, task.pdf.byteLength);
  switch (task.op) {
    case 'open':
      return engine.openInfo(pdf, task.password ?? null, task.limits ? { ...task.limits } : null);
    case 'text': {
      const options = {
        password: task.password,
        limits: task.limits,
        pages: task.pages,
        text: task.text,
        forms: task.forms,
      };
      return task.ocr
        ? engine.readTextOcr(pdf, { ...options, ocr: task.ocr })
        : engine.readText(pdf, options);
    }
    case 'render': {
      const png = engine.render(pdf, {
        password: task.password,
        limits: task.limits,
        page: task.page,
        region: task.region,
        highlights: task.highlights,
        width: task.width,
        maxBytes: task.maxBytes,
      });
      return new Uint8Array(png.buffer, png.byteOffset, png.byteLength);
    }
    case 'edit':
      return engine.edit(pdf, { password: task.password, edits: task.edits, options: task.options });
  }
}

/** Runs one task; never throws (a reply crosses the IPC channel, which drops `code`). */
export function runTask(task: EngineTask): WorkerReply<unknown> {
  try {
    if (!native) throw new Error('engine not initialised');
    return { ok: true, value: call(native, task) };
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    return {
      ok: false,
      code: typeof e?.code === 'string' ? e.code : 'engine_error',
      message: typeof e?.message === 'string' ? e.message : 'engine failure',
    };
  }
}

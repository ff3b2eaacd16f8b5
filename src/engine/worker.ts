import { createRequire } from 'node:module';
import path from 'node:path';
import type * as Native from '../../native/index.js';
import { PROJECT_ROOT } from './root.js';
import { type EngineTask, TEXT_JSON, type WorkerReply } from './tasks.js';

/** The addon as its generated declarations (native/index.d.ts) describe it. */
type NativeEngine = typeof Native;

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
      // The service reads the page count, encryption and signatures, never the pages'
      // sizes: the facts cost an open, not a load of every page (114 pages: ~100 ms).
      return engine.openFacts(pdf, task.password ?? null, task.limits ?? null);
    case 'text': {
      const { op: _op, pdf: _pdf, ...options } = task;
      if (options.ocr) return engine.readTextOcr(pdf, options);
      // One buffer of JSON, parsed by the pool (tasks.ts `TEXT_JSON`): thousands of span
      // objects cost far more to build here, clone over IPC and build again there.
      const json = engine.readTextJson(pdf, options);
      return { [TEXT_JSON]: new Uint8Array(json.buffer, json.byteOffset, json.byteLength) };
    }
    case 'render': {
      const { op: _op, pdf: _pdf, ...options } = task;
      const png = engine.render(pdf, options);
      return new Uint8Array(png.buffer, png.byteOffset, png.byteLength);
    }
    case 'edit': {
      const { op: _op, pdf: _pdf, output: _output, ...request } = task;
      return engine.edit(pdf, request);
    }
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

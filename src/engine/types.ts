/**
 * What crosses the worker boundary. The native addon's own types live in
 * native/index.d.ts (generated); these are the service-side shapes of the tasks.
 */
export type Box = [number, number, number, number];

export interface OpenTask {
  op: 'open';
  pdf: Uint8Array;
  password?: string;
}

export interface TextTask {
  op: 'text';
  pdf: Uint8Array;
  password?: string;
  pages?: number[];
  text: boolean;
  forms: boolean;
}

export interface RenderTask {
  op: 'render';
  pdf: Uint8Array;
  password?: string;
  page: number;
  region?: Box;
  highlights?: Box[];
  width?: number;
  maxBytes: number;
}

export type EngineTask = OpenTask | TextTask | RenderTask;

export interface DocInfo {
  pageCount: number;
  encrypted: boolean;
  pages: { width: number; height: number; rotation: number }[];
  signatures: { field?: string; subFilter?: string }[];
  hasAcroForm: boolean;
  hasXfa: boolean;
}

/** A worker never throws across the thread boundary: structured clone drops `code`. */
export type WorkerReply<T> = { ok: true; value: T } | { ok: false; code: string; message: string };

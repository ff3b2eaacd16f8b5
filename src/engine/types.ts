/**
 * What crosses the worker boundary. The native addon's own types live in
 * native/index.d.ts (generated); these are the service-side shapes of the tasks.
 */
import type { OcrPage } from './ocr-cache.js';

export type Box = [number, number, number, number];

/**
 * What one engine call may cost, checked on the document's bytes before PDFium opens it
 * (crates/pdfedit-engine/src/open/budget.rs); per plan in src/billing/plans.ts. Past one,
 * the call answers 422 document_unsupported naming the limit.
 */
export interface EngineLimits {
  /** Decoded bytes of one stream. */
  streamBytes: number;
  /** Decoded bytes of all the document's streams together. */
  documentBytes: number;
  /** Operators one page executes (forms counted as often as they are drawn). */
  pageOperators: number;
  /** How deep Form XObjects may nest. */
  formDepth: number;
  /** Form XObjects one page draws, nested draws included. */
  formDraws: number;
}

export interface OpenTask {
  op: 'open';
  pdf: Uint8Array;
  password?: string;
  limits?: EngineLimits;
}

export interface TextTask {
  op: 'text';
  pdf: Uint8Array;
  password?: string;
  limits?: EngineLimits;
  pages?: number[];
  text: boolean;
  forms: boolean;
  /** Read scanned pages by OCR (the answer then carries `ocr`: the pages read this call). */
  ocr?: EngineOcrOptions;
}

/** OCR of scanned pages, as the engine takes it. */
export interface EngineOcrOptions {
  languages: string[];
  /** Budget of one page's OCR run (ms). */
  page_budget_ms?: number;
  /** Pages already read with the same languages (src/engine/ocr-cache.ts). */
  cached: OcrPage[];
}

export interface RenderTask {
  op: 'render';
  pdf: Uint8Array;
  password?: string;
  limits?: EngineLimits;
  page: number;
  region?: Box;
  highlights?: Box[];
  width?: number;
  maxBytes: number;
}

/** One edit as the engine takes it (API shape plus its index in the request). */
export interface EngineEdit {
  index: number;
  op: 'replace' | 'delete' | 'redact' | 'insert' | 'form';
  find?: string;
  replace?: string;
  match?: string;
  scope?: Record<string, unknown>;
  fit?: string;
  style?: { font?: string; size?: number; color?: string };
  /** insert: the text and where it goes. */
  text?: string;
  at?: { page?: number; x?: number; y?: number; after?: string; newline?: boolean };
  /** form: values in request order (numbers already turned into text). */
  fields?: { name: string; value: string | boolean | string[] }[];
  flatten?: boolean;
}

export interface EditTask {
  op: 'edit';
  pdf: Uint8Array;
  password?: string;
  edits: EngineEdit[];
  options: {
    font_policy: 'prefer_exact' | 'metric_only';
    break_signature: boolean;
    /** The SAMPLE mark's text, for test-mode and keyless callers (never from the client). */
    mark?: string;
    /** The 'Edited' mark of SPEC rule 12 (default auto: marked when the document is flagged). */
    watermark?: 'auto' | 'on' | 'off';
    /** Whether `off` is allowed on a flagged document (plan and accepted terms, decided by the service). */
    watermark_off_allowed?: boolean;
    /** Find text on scanned pages by OCR; replace and delete there are drawn as pixels. */
    ocr?: EngineOcrOptions;
    /** Give pages read by OCR an invisible text layer in the output. */
    ocr_text_layer?: boolean;
    /** Leave the changes' preview crops empty (rendered by the service when first fetched). */
    lazy_previews?: boolean;
    /** The caller's plan's budgets (checked before PDFium opens the document). */
    limits?: EngineLimits;
  };
}

export interface EngineChange {
  edit_index: number;
  page: number;
  op: string;
  find: string;
  replace: string;
  font_source: string;
  font_used: string;
  verified: boolean;
  collateral_pixels: number;
  box: number[];
  before_png: Uint8Array;
  after_png: Uint8Array;
  field?: string | null;
  value?: string | boolean | string[] | null;
  /** Replace: the line's alignment, kept when the replacement changed its width. */
  alignment?: 'left' | 'centre' | 'right' | 'justified' | null;
}

export interface EngineEditResult {
  pdf: Uint8Array;
  changes: EngineChange[];
  unmatched: { edit_index: number; op: string; find: string }[];
  failed: { edit_index: number; op: string; reason: string; message: string; field?: string | null }[];
  warnings: string[];
  /** Form flattening: the fields left live (the `flatten_skipped` warning names them). */
  flatten_skipped?: string[];
  pages_touched: number[];
  /** Where the engine's time went, in milliseconds. */
  timings: EngineTimings;
  /** Redaction: what was removed besides the page text (images, annotations, metadata…). */
  removed: EngineRemoval[];
  /** Redaction: where a redacted string still occurs in the output. */
  residual: EngineResidual[];
  /** What the engine classified the document as (SPEC rule 12); empty for an ordinary one. */
  flags: EngineFlag[];
  /** 1-based pages that carry the 'Edited' mark. */
  marked_pages: number[];
  /** 1-based touched pages that were read by OCR (each billed five). */
  ocr_pages?: number[];
  /** Pages this call read by OCR, for the cache. */
  ocr_read?: OcrPage[];
}

/** One flag of a document: its kind and the evidence the engine points to. */
export interface EngineFlag {
  kind: string;
  evidence: string;
}

/** Milliseconds per stage of one edit call, each summed over edits and pages. */
export interface EngineTimings {
  parse: number;
  edit: number;
  render: number;
  diff: number;
  save: number;
  mark: number;
  ocr: number;
  total: number;
}

export interface EngineRemoval {
  edit_index: number;
  kind: string;
  page?: number | null;
  location: string;
}

export interface EngineResidual extends EngineRemoval {
  text: string;
}

export type EngineTask = OpenTask | TextTask | RenderTask | EditTask;

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

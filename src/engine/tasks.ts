/**
 * What crosses the engine process boundary: the tasks the pool sends and the replies it
 * gets back. The engine's shapes are the addon's own, generated from native/src into
 * native/index.d.ts by `npm run build:native` (a gate fails when that file is stale); this
 * file only wraps them in tasks. A Buffer in the addon's results arrives here as a plain
 * Uint8Array (the IPC channel's structured clone), which `Cloned` says.
 */
import type {
  EditRequest,
  EditResult,
  EditSpec,
  Limits,
  OcrPage,
  ReadTextOptions,
  RenderOptions,
  TextResult,
} from '../../native/index.js';
import type { WrittenOutput } from './output-file.js';

/** A value as structured clone delivers it: Buffers become plain Uint8Arrays. */
export type Cloned<T> = T extends Buffer
  ? Uint8Array
  : T extends readonly (infer U)[]
    ? Cloned<U>[]
    : T extends object
      ? { [K in keyof T]: Cloned<T[K]> }
      : T;

/**
 * What one engine call may cost, checked on the document's bytes before PDFium opens it
 * (crates/pdfedit-engine/src/open/budget.rs); the service always gives every limit, per
 * plan in src/billing/plans.ts. Past one, the call answers 422 document_unsupported naming
 * the limit.
 */
export type EngineLimits = Required<Limits>;

/** One edit as the engine takes it: the API's edit plus its index in the request. */
export type EngineEdit = EditSpec & { index: number };

/** An edit's result as the service receives it from an engine process. With `written`,
 * the engine process stored the output itself under the task's `output` key (its `pdf` is
 * then empty: src/engine/output-file.ts). */
export type EngineEditResult = Cloned<EditResult> & { written?: WrittenOutput };

/** `readText` and `readTextOcr`: with OCR, also the pages this call read (for the cache). */
export type EngineText = TextResult & { ocr?: OcrPage[] };

/**
 * The key of an engine process's answer to a text task without OCR: the addon's
 * `readTextJson`, UTF-8 JSON of the `TextResult` that `readText` returns, which the pool
 * parses (`textOfReply`).
 */
export const TEXT_JSON = 'textJson';

/** A text task's answer as it crosses the process boundary (see `TEXT_JSON`). */
export type TextReply = EngineText | { [TEXT_JSON]: Uint8Array };

/** The `EngineText` of a text task's reply. */
export function textOfReply(reply: TextReply): EngineText {
  if (!(TEXT_JSON in reply)) return reply;
  const bytes = reply[TEXT_JSON];
  return JSON.parse(
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
  ) as EngineText;
}

/**
 * A text read's answer as JSON text rather than objects: its `pages` and `fields` arrays,
 * each UTF-8 JSON of an array, cut out of the engine's `readTextJson` answer without
 * parsing it (`/v1/text` writes them into its response as they are: src/routes/text.ts).
 */
export interface TextJson {
  pages: Buffer;
  fields: Buffer;
}

const PAGES_OPEN = Buffer.from('{"pages":');
const FIELDS_KEY = Buffer.from('],"fields":');

/**
 * The `TextJson` of a text task's reply. The engine writes `{"pages":[...],"fields":[...]}`
 * in that order (native/src/json.rs `text_result_json`); a quote inside a string is
 * escaped, and no span or page has a member named "fields", so the last `],"fields":` is
 * the one between the two arrays.
 */
export function textJsonOfReply(reply: TextReply): TextJson {
  if (!(TEXT_JSON in reply))
    return {
      pages: Buffer.from(JSON.stringify(reply.pages)),
      fields: Buffer.from(JSON.stringify(reply.fields)),
    };
  const bytes = reply[TEXT_JSON];
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const cut = buf.lastIndexOf(FIELDS_KEY);
  if (!buf.subarray(0, PAGES_OPEN.length).equals(PAGES_OPEN) || cut < 0 || buf[buf.length - 1] !== 0x7d)
    throw new Error('engine text JSON: unexpected shape');
  return {
    pages: buf.subarray(PAGES_OPEN.length, cut + 1),
    fields: buf.subarray(cut + FIELDS_KEY.length, buf.length - 1),
  };
}

export interface OpenTask {
  op: 'open';
  pdf: Uint8Array;
  password?: string;
  limits?: EngineLimits;
}

export type TextTask = { op: 'text'; pdf: Uint8Array } & ReadTextOptions;

export type RenderTask = { op: 'render'; pdf: Uint8Array } & RenderOptions;

export type EditTask = { op: 'edit'; pdf: Uint8Array } & EditRequest & {
    edits: EngineEdit[];
    /** The blob key the output's row reserved: an engine process that was given the blob
     * directory writes a changed output there itself and answers without its bytes. */
    output?: string;
  };

export type EngineTask = OpenTask | TextTask | RenderTask | EditTask;

/** A worker never throws across the process boundary: structured clone drops `code`. */
export type WorkerReply<T> = { ok: true; value: T } | { ok: false; code: string; message: string };

import type { EnginePool } from './pool.js';
import type { EngineText, TextJson, TextTask } from './tasks.js';

/**
 * Reads of at least this many pages are split over two engine processes when both are
 * free. Below it the second process's own open of the document (and its budget scan)
 * costs about what the split saves.
 */
export const SPLIT_MIN_PAGES = 8;

/**
 * `engine.readText(task)`, with a long read split in two: the first half of the pages
 * read in one engine process and the second half in another, at once, and the halves
 * joined in page order. The answer is the one a single read gives: a span's id, line and
 * block depend only on its own page. Form fields are listed in the order of their first
 * widget's page, and listing them visits every page (a field merges all its widgets): the
 * second half lists every field of the pages asked for (`fieldPages`), the first reads
 * text only, so that no page is loaded twice for the fields (with both halves listing
 * theirs, each loaded the other's pages too, and the field tree was read twice).
 *
 * Split only without OCR (its cache and edit slot are per call), when text is read (a
 * forms-only read visits every page in each half), when at least `SPLIT_MIN_PAGES` pages
 * are asked for, and when two engine processes are free and nothing waits in the queue:
 * a busy service keeps one process per request. Each half has the call's whole budget and
 * both run at once, so the call's time limit holds; a failure of either fails the call.
 */
export async function readTextSplit(
  engine: EnginePool,
  task: Omit<TextTask, 'op'>,
  pageCount: number,
  timeoutMs?: number,
): Promise<EngineText> {
  const halves = splitTask(engine, task, pageCount);
  if (!halves) return engine.readText(task, timeoutMs);
  const [first, second] = await Promise.all(halves.map((t) => engine.readText(t, timeoutMs)));
  return { pages: [...first!.pages, ...second!.pages], fields: second!.fields };
}

/**
 * `readTextSplit` as JSON text (`engine.readTextJson`): the halves' page arrays joined as
 * text, nothing parsed. Not for OCR (its answer also carries the pages OCR'd).
 */
export async function readTextSplitJson(
  engine: EnginePool,
  task: Omit<TextTask, 'op'>,
  pageCount: number,
  timeoutMs?: number,
): Promise<TextJson> {
  const halves = splitTask(engine, task, pageCount);
  if (!halves) return engine.readTextJson(task, timeoutMs);
  const [first, second] = await Promise.all(halves.map((t) => engine.readTextJson(t, timeoutMs)));
  return { pages: joinJsonArrays(first!.pages, second!.pages), fields: second!.fields };
}

/** Two JSON arrays' text joined into one array's (`[a,b]` and `[c]` give `[a,b,c]`). */
export function joinJsonArrays(a: Buffer, b: Buffer): Buffer {
  if (isEmptyJsonArray(a)) return b;
  if (isEmptyJsonArray(b)) return a;
  return Buffer.concat([a.subarray(0, a.length - 1), COMMA, b.subarray(1)]);
}

const COMMA = Buffer.from(',');

/** The engine writes JSON without white space: an empty array is `[]`. */
function isEmptyJsonArray(a: Buffer): boolean {
  return a.length === 2;
}

/** The two halves' tasks when the read is split (see `readTextSplit`), else undefined. */
function splitTask(
  engine: EnginePool,
  task: Omit<TextTask, 'op'>,
  pageCount: number,
): [Omit<TextTask, 'op'>, Omit<TextTask, 'op'>] | undefined {
  const pages = [...new Set(task.pages ?? Array.from({ length: pageCount }, (_, i) => i + 1))].sort(
    (a, b) => a - b,
  );
  const stats = engine.stats;
  const split =
    !task.ocr &&
    task.text !== false &&
    pages.length >= SPLIT_MIN_PAGES &&
    pages.every((p) => Number.isInteger(p) && p >= 1 && p <= pageCount) &&
    stats.free >= 2 &&
    stats.queued === 0;
  if (!split) return undefined;
  const half = Math.ceil(pages.length / 2);
  const forms = task.forms !== false;
  return [
    { ...task, pages: pages.slice(0, half), forms: false },
    { ...task, pages: pages.slice(half), ...(forms ? { fieldPages: pages } : {}) },
  ];
}

import type { EnginePool } from './pool.js';
import type { EngineText, TextTask } from './tasks.js';

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
 * block depend only on its own page, and form fields are listed in the order of their
 * first widget's page, each half listing those whose first widget is on its pages (each
 * half visits every page for the fields, as a single read does).
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
  if (!split) return engine.readText(task, timeoutMs);
  const half = Math.ceil(pages.length / 2);
  const [first, second] = await Promise.all([
    engine.readText({ ...task, pages: pages.slice(0, half) }, timeoutMs),
    engine.readText({ ...task, pages: pages.slice(half) }, timeoutMs),
  ]);
  return { pages: [...first.pages, ...second.pages], fields: [...first.fields, ...second.fields] };
}

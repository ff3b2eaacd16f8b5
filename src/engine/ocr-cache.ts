import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { OcrPage } from '../../native/index.js';
import { ApiError } from '../kernel/api-error.js';

/** Largest number of pages kept (the oldest go first). */
const MAX_PAGES = 2_000;

/**
 * OCR results per document (sha-256 of its bytes), page and languages, kept for the
 * retention window (config.fileTtlMs) so a find followed by an edit of the same document
 * does not OCR twice: the pages are handed back to the engine as `ocr.cached`. In memory, per
 * API process; a miss only costs the OCR again.
 */
export class OcrCache {
  private readonly pages = new Map<string, { page: OcrPage; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  static docKey(pdf: Uint8Array): string {
    return createHash('sha256').update(pdf).digest('hex');
  }

  /** Every cached page of the document read with `languages`. */
  get(doc: string, languages: string): OcrPage[] {
    const out: OcrPage[] = [];
    const now = this.now();
    for (const [key, entry] of this.pages) {
      if (!key.startsWith(`${doc}|${languages}|`)) continue;
      if (entry.expires <= now) this.pages.delete(key);
      else out.push(entry.page);
    }
    return out;
  }

  put(doc: string, pages: OcrPage[]): void {
    const expires = this.now() + this.ttlMs;
    for (const page of pages) {
      const key = `${doc}|${page.languages}|${page.page}`;
      this.pages.delete(key);
      this.pages.set(key, { page, expires });
    }
    while (this.pages.size > MAX_PAGES) {
      const oldest = this.pages.keys().next().value;
      if (oldest === undefined) break;
      this.pages.delete(oldest);
    }
  }

  get size(): number {
    return this.pages.size;
  }
}

let installed: string[] | undefined;

/** Tesseract's installed languages (`tesseract --list-langs`, read once; `osd` left out). */
export function installedOcrLanguages(): string[] {
  if (installed) return installed;
  try {
    const out = execFileSync('tesseract', ['--list-langs'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    installed = out
      .split('\n')
      .slice(1)
      .map((l) => l.trim())
      .filter((l) => l !== '' && l !== 'osd');
  } catch {
    installed = [];
  }
  return installed;
}

/**
 * `ocr_languages` checked against the installed ones (400 naming the first that is not);
 * the default is eng. Returns Tesseract's `eng+deu` form too.
 */
export function ocrLanguages(
  requested: string[] | undefined,
  member: string,
): { list: string[]; joined: string } {
  const list = requested && requested.length > 0 ? [...new Set(requested)] : ['eng'];
  const have = installedOcrLanguages();
  for (const l of list) {
    if (!have.includes(l)) {
      throw new ApiError(
        'invalid_request',
        `${member}: OCR language "${l}" is not installed; installed: ${have.join(', ') || 'none'}.`,
      );
    }
  }
  return { list, joined: list.join('+') };
}

let shared: OcrCache | undefined;

/** The process's cache (one per API or worker process), kept for the retention window. */
export function ocrCacheFor(config: { fileTtlMs: number; now: () => number }): OcrCache {
  shared ??= new OcrCache(config.fileTtlMs, () => config.now());
  return shared;
}

/** Engine budget of one page's OCR run (the engine's own default per page). */
export const OCR_PAGE_BUDGET_MS = 60_000;
/** Longest engine budget of a synchronous call with OCR. */
const MAX_OCR_BUDGET_MS = 10 * 60_000;

/** A call's engine budget when it may OCR `pages` pages: each gets its own run's budget. */
export function ocrBudgetMs(budgetMs: number, pages: number): number {
  if (pages <= 0) return budgetMs;
  return Math.min(MAX_OCR_BUDGET_MS, budgetMs + pages * OCR_PAGE_BUDGET_MS);
}

import { ApiError } from '../kernel/api-error.js';

/**
 * Resolves a page range (array of 1-based numbers, or "1-3,7") against a document's page
 * count into sorted unique page numbers. Pages past the end are an error, not silently dropped.
 */
export function resolvePages(range: number[] | string | undefined, pageCount: number): number[] {
  if (range === undefined) return Array.from({ length: pageCount }, (_, i) => i + 1);
  const pages = new Set<number>();
  const add = (n: number) => {
    if (!Number.isInteger(n) || n < 1)
      throw new ApiError('invalid_request', `Page ${n} is not a page number.`);
    if (n > pageCount) {
      throw new ApiError(
        'invalid_request',
        `Page ${n} does not exist: the document has ${pageCount} page(s).`,
      );
    }
    pages.add(n);
  };
  if (Array.isArray(range)) {
    for (const n of range) add(n);
  } else {
    for (const part of range.split(',')) {
      const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
      if (!m) throw new ApiError('invalid_request', `Page range "${range}" is not of the form "1-3,7".`);
      const from = Number(m[1]);
      const to = m[2] === undefined ? from : Number(m[2]);
      if (to < from) throw new ApiError('invalid_request', `Page range "${part.trim()}" runs backwards.`);
      if (to > pageCount) add(to);
      for (let n = from; n <= to; n++) add(n);
    }
  }
  return [...pages].sort((a, b) => a - b);
}

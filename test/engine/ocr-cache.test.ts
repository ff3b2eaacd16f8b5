import { describe, expect, it } from 'vitest';
import type { OcrPage } from '../../native/index.js';
import { OcrCache, ocrBudgetMs } from '../../src/engine/ocr-cache.js';

const page = (n: number, languages = 'eng'): OcrPage => ({
  page: n,
  languages,
  skew: 0,
  words: [{ text: `w${n}`, box: [0, 0, 10, 10], confidence: 90, block: 1, line: 1 }],
});

describe('OcrCache', () => {
  it('keeps pages per document and languages for the retention window', () => {
    let now = 1_000;
    const cache = new OcrCache(500, () => now);
    const doc = OcrCache.docKey(Buffer.from('%PDF-1.7 a'));
    const other = OcrCache.docKey(Buffer.from('%PDF-1.7 b'));
    cache.put(doc, [page(1), page(2), page(1, 'eng+deu')]);
    expect(cache.get(doc, 'eng').map((p) => p.page)).toEqual([1, 2]);
    expect(cache.get(doc, 'eng+deu').map((p) => p.page)).toEqual([1]);
    expect(cache.get(other, 'eng')).toEqual([]);
    now += 499;
    expect(cache.get(doc, 'eng')).toHaveLength(2);
    now += 1;
    expect(cache.get(doc, 'eng')).toEqual([]);
  });

  it("gives each page that may be OCR'd its own budget, capped", () => {
    expect(ocrBudgetMs(15_000, 0)).toBe(15_000);
    expect(ocrBudgetMs(15_000, 2)).toBe(135_000);
    expect(ocrBudgetMs(15_000, 500)).toBe(600_000);
  });
});

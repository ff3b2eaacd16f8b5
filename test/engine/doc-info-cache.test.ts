import { describe, expect, it } from 'vitest';
import type { DocInfo } from '../../native/index.js';
import { DocInfoCache } from '../../src/engine/doc-info-cache.js';
import type { EngineLimits } from '../../src/engine/tasks.js';

const info = (pageCount: number): DocInfo => ({
  pageCount,
  encrypted: false,
  pages: [{ width: 612, height: 792, rotation: 0 }],
  signatures: [],
  hasAcroForm: false,
  hasXfa: false,
});
const PDF = Buffer.from('%PDF-1.7 one');
const LIMITS: EngineLimits = {
  streamBytes: 1,
  documentBytes: 2,
  pageOperators: 3,
  formDepth: 4,
  formDraws: 5,
};

describe('DocInfoCache (opens kept by content, password and limits)', () => {
  it('keys by the bytes, the password and the limits, each apart', () => {
    const k = DocInfoCache.keyOf(PDF, undefined, LIMITS);
    expect(DocInfoCache.keyOf(Buffer.from('%PDF-1.7 one'), undefined, LIMITS)).toBe(k);
    expect(DocInfoCache.keyOf(Buffer.from('%PDF-1.7 two'), undefined, LIMITS)).not.toBe(k);
    expect(DocInfoCache.keyOf(PDF, 'secret', LIMITS)).not.toBe(k);
    expect(DocInfoCache.keyOf(PDF, '', LIMITS)).not.toBe(k);
    expect(DocInfoCache.keyOf(PDF, undefined, { ...LIMITS, documentBytes: 3 })).not.toBe(k);
    // The order limits were written in does not matter.
    expect(
      DocInfoCache.keyOf(PDF, undefined, {
        formDraws: 5,
        formDepth: 4,
        pageOperators: 3,
        documentBytes: 2,
        streamBytes: 1,
      }),
    ).toBe(k);
    // The password is never part of the key in clear.
    expect(DocInfoCache.keyOf(PDF, 'secret', LIMITS)).not.toContain('secret');
  });

  it('hands out copies, forgets the least recently used past its size and entries past their age', () => {
    let now = 0;
    const c = new DocInfoCache(2, 1_000, () => now);
    c.put('a', info(1));
    c.put('b', info(2));
    const got = c.get('a');
    expect(got?.pageCount).toBe(1);
    got!.pageCount = 99; // a caller's change does not reach the cache
    expect(c.get('a')?.pageCount).toBe(1);
    c.put('c', info(3)); // 'b' was used least recently
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')?.pageCount).toBe(1);
    expect(c.size).toBe(2);
    now = 1_000;
    expect(c.get('a')).toBeUndefined();
    expect(c.get('c')).toBeUndefined();
  });
});

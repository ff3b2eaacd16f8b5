import { describe, expect, it } from 'vitest';
import { resolvePages } from '../../src/domain/page-range.js';
import { ApiError } from '../../src/kernel/api-error.js';

describe('resolvePages', () => {
  it('defaults to every page', () => {
    expect(resolvePages(undefined, 3)).toEqual([1, 2, 3]);
  });
  it('reads arrays and range strings, sorted and unique', () => {
    expect(resolvePages([3, 1, 3], 5)).toEqual([1, 3]);
    expect(resolvePages('1-3,7, 5', 9)).toEqual([1, 2, 3, 5, 7]);
  });
  it('refuses pages past the end, backwards ranges and garbage', () => {
    for (const bad of ['4', '1-9', '3-1', 'a', '1,,2', '0'] as const) {
      expect(() => resolvePages(bad, 3)).toThrow(ApiError);
    }
    expect(() => resolvePages([4], 3)).toThrow(/does not exist/);
  });
});

import { describe, expect, it } from 'vitest';
import { editStatus } from '../../src/domain/edit-result.js';

const change = { page: 1 } as never;
const miss = { edit_index: 1 } as never;

describe('editStatus', () => {
  it('is done when every edit applied, on the page or only in removed strings', () => {
    expect(editStatus({ changes: [change], unmatched: [], failed: [] })).toBe('done');
    // A redaction whose string was only in the metadata and an annotation.
    expect(editStatus({ changes: [], unmatched: [], failed: [], removed: [{}] })).toBe('done');
  });

  it('is partial when something applied and something did not', () => {
    expect(editStatus({ changes: [change], unmatched: [miss], failed: [] })).toBe('partial');
    expect(editStatus({ changes: [], unmatched: [], failed: [miss], removed: [{}] })).toBe('partial');
  });

  it('is failed when nothing applied', () => {
    expect(editStatus({ changes: [], unmatched: [miss], failed: [] })).toBe('failed');
    expect(editStatus({ changes: [], unmatched: [], failed: [miss], removed: [] })).toBe('failed');
  });
});

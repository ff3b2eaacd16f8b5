import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FailReason } from '../../native/index.js';
import { PROJECT_ROOT } from '../../src/engine/root.js';
import { Failed } from '../../src/schemas/results.js';

/** The addon's string enums exist at run time too, as objects of their words. */
const native = createRequire(import.meta.url)(path.join(PROJECT_ROOT, 'native', 'index.js')) as {
  FailReason: Record<string, FailReason>;
  EditOp: Record<string, string>;
};

describe('failure reasons across the boundary', () => {
  const words = Object.values(native.FailReason);

  it('are the engine FailReason words, snake_case and distinct', () => {
    expect(words.length).toBeGreaterThanOrEqual(20);
    expect(new Set(words).size).toBe(words.length);
    for (const w of words) expect(w).toMatch(/^[a-z][a-z0-9_]*$/);
    // The engine's internal signal to reflow a paragraph is not an API word.
    expect(words).not.toContain('reflow_needed');
  });

  it('are each documented in the API schema of failed[].reason', () => {
    const description = Failed.properties.reason.description ?? '';
    const undocumented = words.filter((w) => !new RegExp(`\\b${w}\\b`).test(description));
    expect(undocumented).toEqual([]);
  });

  it('go with the ops the API names', () => {
    expect(Object.values(native.EditOp).sort()).toEqual(['delete', 'form', 'insert', 'redact', 'replace']);
  });
});

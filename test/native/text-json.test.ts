import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type * as Native from '../../native/index.js';
import { loadConfig } from '../../src/config.js';
import { PROJECT_ROOT } from '../../src/engine/root.js';
import { corpus, corpusPath } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const native = createRequire(import.meta.url)(path.join(PROJECT_ROOT, 'native', 'index.js')) as typeof Native;

/**
 * Issue 18 item 4: the engine processes answer a text read with `readTextJson` (one buffer
 * of JSON) rather than `readText`'s objects; parsed, it is `readText`'s answer exactly, on
 * every corpus document (same members in the same order, same numbers, none added).
 */
describe.skipIf(!HAVE_CORPUS)('readTextJson', () => {
  beforeAll(() => native.init(loadConfig({}).pdfiumLibPath));

  it('parses to what readText returns, for every corpus document', () => {
    let spans = 0;
    let fields = 0;
    for (const entry of corpus()) {
      const pdf = readFileSync(corpusPath(entry.file));
      const password = entry.userPassword ?? entry.ownerPassword;
      const options = { ...(password ? { password } : {}), text: true, forms: true };
      let objects: Native.TextResult;
      try {
        // The first read of a document in a process may place a few glyphs of a font it
        // substitutes differently from later reads (form-dnd-character-sheet-adobe.pdf's
        // footer, by a few hundredths of a point): compare two later reads.
        native.readText(pdf, options);
        objects = native.readText(pdf, options);
      } catch (e) {
        expect(() => native.readTextJson(pdf, options), entry.file).toThrow(String((e as Error).message));
        continue;
      }
      const parsed = JSON.parse(native.readTextJson(pdf, options).toString('utf8')) as unknown;
      expect(parsed, entry.file).toStrictEqual(objects);
      // Member order too: what a client sees in the service's answer.
      expect(JSON.stringify(parsed), entry.file).toBe(JSON.stringify(objects));
      spans += objects.pages.reduce((n, p) => n + p.spans.length, 0);
      fields += objects.fields.length;
    }
    // The corpus exercised both lists (and so every member the writer knows).
    expect(spans).toBeGreaterThan(10_000);
    expect(fields).toBeGreaterThan(100);
  });

  it('answers a page subset and forms-only read as readText does', () => {
    const pdf = readFileSync(corpusPath('form-cms1490s-medicare-18p-partly-filled.pdf'));
    for (const options of [
      { text: true, forms: true, pages: [5, 1, 18] },
      { text: false, forms: true },
      { text: true, forms: false },
    ]) {
      const parsed = JSON.parse(native.readTextJson(pdf, options).toString('utf8')) as unknown;
      expect(parsed).toStrictEqual(native.readText(pdf, options));
    }
  });
});

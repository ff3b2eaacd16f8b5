import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type * as Native from '../../native/index.js';
import { loadConfig } from '../../src/config.js';
import { PROJECT_ROOT } from '../../src/engine/root.js';
import { corpusPath } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const native = createRequire(import.meta.url)(path.join(PROJECT_ROOT, 'native', 'index.js')) as typeof Native;

/**
 * `fieldPages`: a read lists the form fields of those pages whatever pages' text it reads
 * (src/engine/text-split.ts has one half of a long read list every field and the other
 * read text only).
 */
describe.skipIf(!HAVE_CORPUS)('readText fieldPages', () => {
  beforeAll(() => native.init(loadConfig({}).pdfiumLibPath));
  // Fields on many of its 18 pages.
  const pdf = () => readFileSync(corpusPath('form-cms1490s-medicare-18p-partly-filled.pdf'));
  const all = Array.from({ length: 18 }, (_, i) => i + 1);
  const late = all.slice(9);

  it('lists the fields of fieldPages while reading the text of pages', () => {
    const doc = pdf();
    const whole = native.readText(doc, { text: true, forms: true });
    const ofLate = native.readText(doc, { text: true, forms: true, pages: late });
    const lateText = native.readText(doc, { text: true, forms: true, pages: late, fieldPages: all });
    expect(ofLate.fields.length).toBeLessThan(whole.fields.length);
    expect(lateText.fields).toStrictEqual(whole.fields);
    expect(lateText.pages).toStrictEqual(ofLate.pages);
    const earlyFields = native.readText(doc, { text: false, forms: true, fieldPages: all.slice(0, 9) });
    expect(earlyFields.fields).toStrictEqual(whole.fields.filter((f) => f.page <= 9));
  });

  it('lists none without forms, and refuses a page the document does not have', () => {
    const doc = pdf();
    expect(native.readText(doc, { text: false, forms: false, fieldPages: all }).fields).toEqual([]);
    expect(() => native.readText(doc, { text: true, forms: true, pages: [1], fieldPages: [19] })).toThrow(
      /page 19 does not exist/,
    );
  });
});

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import {
  corpus,
  corpusPath,
  letterWordRecall,
  letterWords,
  pdftotext,
  pdftotextAvailable,
  wordOverlap,
  words,
  wordTotal,
} from '../helpers/corpus.js';
import { startCorpusApp } from '../helpers/corpus-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import type { FileServer } from '../helpers/serve.js';

interface Span {
  span_id: string;
  page: number;
  text: string;
  box: number[];
  font: string;
  size: number;
  color: string;
  flags: string[];
  line: number;
  block: number;
  space_before: boolean;
  source: string;
}
interface TextAnswer {
  page_count: number;
  pages: { page: number; width: number; height: number; rotation: number; spans: Span[]; text: string }[];
  fields: {
    name: string;
    type: string;
    value: unknown;
    page: number;
    box: number[];
    read_only: boolean;
    required: boolean;
    multiline: boolean;
    comb: boolean;
    max_len: number | null;
  }[];
}

/** The document's text as the API reads it: each page's `text`, in reading order. */
function joinedText(answer: TextAnswer): string {
  return answer.pages.map((p) => p.text).join('\n');
}

const entries = corpus();
// The files the evaluator scores: those with a page that has text.
const scoredEntries = entries.filter((e) => e.pagesWithoutText < e.pages);

describe.skipIf(!HAVE_CORPUS)('POST /v1/text on the corpus (../shared/corpus)', () => {
  let t: TestApp;
  let key: string;
  let files: FileServer;
  beforeAll(async () => {
    ({ t, key, files } = await startCorpusApp());
  });
  afterAll(async () => {
    await files?.close();
    await t?.close();
  });

  const read = (file: string, password?: string, extra: Record<string, unknown> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/text',
      headers: bearer(key),
      payload: { source: { url: files.url(file), ...(password ? { password } : {}) }, ...extra },
    });

  it('answers every corpus file without a server error', async () => {
    for (const e of entries) {
      const res = await read(e.file, e.userPassword ?? e.ownerPassword);
      expect(res.statusCode, `${e.file}: ${res.body.slice(0, 300)}`).toBe(200);
    }
  });

  // Issue 2's bar, measured as the independent evaluator measures it (../shared/tools/
  // evallib.py `check_text`): the share of pdftotext's words (runs of 5-12 ASCII letters)
  // that the spans' texts, joined by spaces, also hold; files with fewer than 20 such words
  // are not scored. Unlike the evaluator this also reads the files that need a user
  // password (pdftotext gets it too). Beside it, over every file with a text layer (CJK and
  // Arabic too): the stricter overlap of whitespace-separated words of the pages' plain
  // text, |A ∩ B| / max(|A|, |B|), which also counts words we add. Where the two tools
  // disagree today and why: see the notes at the bars.
  it.skipIf(!pdftotextAvailable())(
    'agrees with pdftotext word for word (evaluator metric: average >= 0.98)',
    async () => {
      const scores: number[] = [];
      const strict: number[] = [];
      for (const e of scoredEntries) {
        const password = e.userPassword ?? e.ownerPassword;
        const reference = pdftotext(corpusPath(e.file), password);
        const res = await read(e.file, password);
        expect(res.statusCode, e.file).toBe(200);
        const answer = res.json() as TextAnswer;
        const overlap = wordOverlap(words(joinedText(answer)), words(reference));
        if (e.textChars > 0) strict.push(overlap);
        const refWords = letterWords(reference);
        let figure = '  -  ';
        if (wordTotal(refWords) >= 20) {
          const spanText = answer.pages.flatMap((p) => p.spans.map((s) => s.text)).join(' ');
          const score = letterWordRecall(letterWords(spanText), refWords);
          scores.push(score);
          figure = `${score.toFixed(3)}${score < 0.98 ? '<' : ' '}`;
        }
        console.log(
          `text agreement ${figure} ${e.file} (${wordTotal(refWords)} letter words; ` +
            `whitespace-word overlap ${overlap.toFixed(3)})`,
        );
      }
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const passing = scores.filter((x) => x >= 0.98).length;
      console.log(
        `text agreement average ${mean(scores).toFixed(4)} over ${scores.length} scored files, ` +
          `${passing} of them >= 0.98; whitespace-word overlap average ${mean(strict).toFixed(4)} ` +
          `over ${strict.length} files`,
      );
      expect(mean(scores)).toBeGreaterThanOrEqual(0.98);
      // Measured 0.975; the floor guards against regressions. What keeps files apart:
      // - a word hyphenated at a line end is two spans ("pellen-", "tesque"), so joining span
      //   texts by spaces loses it; pdftotext (and our page `text`) join it. This alone keeps
      //   the latex, constitution, tracemonkey, Type 3 bitmap and Vicksburg files under 0.98
      //   on the evaluator metric; on the page text they score 0.993 to 1.
      // - pdftotext's own readings: the Arabic file's words glued and in visual order, the
      //   Medicare form's sideways letter-spaced banner cut into letters, the Vicksburg OCR
      //   layer's overlapping lines interleaved ("supmwpose"), underscores run together.
      // - NeedAppearances text fields with empty appearances (pdftotext builds them); a Word
      //   font whose ToUnicode maps letters to Latin Extended code points (both tools wrong).
      expect(mean(strict)).toBeGreaterThanOrEqual(0.97);
    },
  );

  it('gives spans every documented member, in top-left page coordinates', async () => {
    const res = await read('font-tt-subset-libreoffice-trivial.pdf');
    const answer = res.json() as TextAnswer;
    const page = answer.pages[0]!;
    expect(page.spans.length).toBeGreaterThan(0);
    for (const s of page.spans) {
      expect(s).toMatchObject({ page: 1, source: 'text-layer' });
      expect(typeof s.space_before).toBe('boolean');
      expect(s.span_id).toMatch(/\S/);
      expect(s.color).toMatch(/^#[0-9a-f]{6}$/);
      expect(Array.isArray(s.flags)).toBe(true);
      const [x0, y0, x1, y1] = s.box as [number, number, number, number];
      expect(x0).toBeLessThan(x1);
      expect(y0).toBeLessThan(y1);
      expect(x0).toBeGreaterThanOrEqual(0);
      expect(y1).toBeLessThanOrEqual(page.height);
    }
    // The first paragraph starts near the top of the page, not the bottom.
    const lorem = page.spans.find((s) => s.text.includes('Lorem ipsum'))!;
    expect(lorem.box[1]).toBeLessThan(page.height / 2);
  });

  it('returns the same span ids on every call', async () => {
    const a = (await read('font-type1-pdflatex-4p.pdf')).json() as TextAnswer;
    const b = (await read('font-type1-pdflatex-4p.pdf')).json() as TextAnswer;
    const ids = (x: TextAnswer) => x.pages.flatMap((p) => p.spans.map((s) => s.span_id));
    expect(ids(a).length).toBeGreaterThan(10);
    expect(ids(a)).toEqual(ids(b));
    expect(new Set(ids(a)).size).toBe(ids(a).length);
  });

  it('limits the answer to a page range', async () => {
    const res = await read('font-type1-pdflatex-4p.pdf', undefined, { pages: '2-3' });
    expect(res.statusCode).toBe(200);
    expect((res.json() as TextAnswer).pages.map((p) => p.page)).toEqual([2, 3]);
    const bad = await read('font-type1-pdflatex-4p.pdf', undefined, { pages: [5] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('invalid_request');
  });

  it('opens encrypted files with their password and refuses them without', async () => {
    const locked = entries.filter((e) => e.userPassword);
    expect(locked.length).toBeGreaterThan(3);
    for (const e of locked) {
      const without = await read(e.file);
      expect(without.statusCode, e.file).toBe(422);
      expect(without.json().error.code, e.file).toBe('document_encrypted');
      const wrong = await read(e.file, 'not-the-password');
      expect(wrong.json().error.code, e.file).toBe('document_encrypted');
      const right = await read(e.file, e.userPassword);
      expect(right.statusCode, e.file).toBe(200);
    }
  });

  it('reads AcroForm fields with name, type and value', async () => {
    const res = await read('form-fancy-fields-acrobat-dc.pdf', undefined, { layers: ['forms'] });
    const answer = res.json() as TextAnswer;
    expect(answer.pages).toEqual([]);
    const types = new Set(answer.fields.map((f) => f.type));
    for (const ty of ['text', 'checkbox', 'radio', 'list', 'combo', 'button']) expect(types).toContain(ty);
    for (const f of answer.fields) {
      expect(f.name).toMatch(/\S/);
      expect(f.page).toBeGreaterThanOrEqual(1);
    }
    expect(
      answer.fields.filter((f) => f.value !== null && f.value !== '' && f.value !== false).length,
    ).toBeGreaterThan(5);
  });

  it('gives each field read_only, required, multiline, comb and max_len as qpdf reads the field tree', async () => {
    // qpdf is the independent reader: its JSON gives each terminal field's inherited /Ff;
    // /MaxLen it does not give, so comb fields must carry one and the combed CRA return's
    // six comb boxes are counted.
    const forms = [
      'form-cra-cannabis-return-combed-13p.pdf',
      'form-irs-w9-livecycle.pdf',
      'form-lu-160f-2019-french.pdf',
    ];
    let compared = 0;
    let combs = 0;
    for (const file of forms) {
      const res = await read(file, undefined, { layers: ['forms'] });
      expect(res.statusCode, file).toBe(200);
      const answer = res.json() as TextAnswer;
      const json = JSON.parse(
        execFileSync('qpdf', ['--json', '--json-key=acroform', corpusPath(file)], { encoding: 'utf8' }),
      ) as { acroform: { fields: { fullname: string; fieldflags: number; istext: boolean }[] } };
      const flags = new Map(json.acroform.fields.map((f) => [f.fullname, f]));
      for (const f of answer.fields) {
        const q = flags.get(f.name);
        if (!q) continue;
        compared++;
        const bit = (n: number) => (q.fieldflags & (1 << n)) !== 0;
        expect(f.read_only, `${file} ${f.name}`).toBe(bit(0));
        expect(f.required, `${file} ${f.name}`).toBe(bit(1));
        if (f.type === 'text') {
          expect(f.multiline, `${file} ${f.name}`).toBe(bit(12));
          if (f.comb) combs++;
          if (f.comb) expect(f.max_len, `${file} ${f.name}`).toBeGreaterThan(0);
          if (bit(24) && !bit(12) && !bit(13) && f.max_len !== null) expect(f.comb).toBe(true);
        } else {
          expect([f.multiline, f.comb, f.max_len], `${file} ${f.name}`).toEqual([false, false, null]);
        }
      }
    }
    expect(compared).toBeGreaterThan(700);
    expect(combs).toBeGreaterThanOrEqual(6);
    expect(
      (await read('form-irs-1040-prefilled-livecycle.pdf', undefined, { layers: ['forms'] }))
        .json()
        .fields.filter((f: { max_len: number | null }) => (f.max_len ?? 0) > 0).length,
    ).toBeGreaterThan(90);
  });

  it('answers 422 document_unsupported for damaged and non-PDF input, never 500', async () => {
    const pdf = readFileSync(corpusPath('font-tt-subset-libreoffice-trivial.pdf'));
    const cases: Record<string, Buffer> = {
      'png.pdf': Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'),
      'text.pdf': Buffer.from('hello, this is not a PDF at all\n'.repeat(20)),
      'empty.pdf': Buffer.alloc(0),
      'header-only.pdf': Buffer.from('%PDF-1.7\n%%EOF\n'),
      'truncated.pdf': pdf.subarray(0, 400),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      files.put(name, bytes);
      const res = await read(name);
      expect(res.statusCode, name).toBe(422);
      expect(res.json().error.code, name).toBe('document_unsupported');
    }
  });

  it('answers 502 upstream_error when the URL cannot be fetched', async () => {
    const res = await read('missing.pdf');
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('upstream_error');
  });
});

describe('POST /v1/text URL safety', () => {
  it('refuses loopback URLs at request time (400) when private URLs are not allowed', async () => {
    const t = await startApp('sqlite');
    try {
      const key = await t.newKey();
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/text',
        headers: bearer(key),
        payload: { source: { url: 'http://127.0.0.1:9/x.pdf' } },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('invalid_request');
      expect(res.json().error.message).toMatch(/^source\.url: .*private, loopback or reserved/);
    } finally {
      await t.close();
    }
  });
});

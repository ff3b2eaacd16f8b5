import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildScanFixture } from '../../fixtures/scan/generate.js';
import { installedOcrLanguages, OcrCache, ocrCacheFor } from '../../src/engine/ocr-cache.js';
import type { BillingSchema } from '../../src/store/billing-schema.js';
import { bearer } from '../helpers/app.js';
import { corpus, corpusPath } from '../helpers/corpus.js';
import { type EditApp, startEditApp } from '../helpers/edit-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import { waitForJob } from '../helpers/jobs.js';

/** Issue 19: scanned pages read by OCR, found, and edited as pixels. */

interface Span {
  span_id: string;
  text: string;
  box: number[];
  source: string;
  confidence?: number;
  line: number;
}
interface TextAnswer {
  pages: { page: number; spans: Span[]; text: string }[];
}

const norm = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
/** Share of `expected` words that OCR read (each word counted once per occurrence). */
function wordAccuracy(expected: string[], read: string): number {
  const bag = new Map<string, number>();
  for (const w of norm(read).split(/\s+/)) bag.set(w, (bag.get(w) ?? 0) + 1);
  let hit = 0;
  const want = expected.flatMap((e) => norm(e).split(/\s+/)).filter((w) => w !== '');
  for (const w of want) {
    const n = bag.get(w) ?? 0;
    if (n > 0) {
      hit++;
      bag.set(w, n - 1);
    }
  }
  return want.length === 0 ? 1 : hit / want.length;
}

const haveTesseract = installedOcrLanguages().includes('eng');
/** The corpus scans (image pages with the manifest's OCR-only phrases), with their passwords.
 * OCR is slow (seconds a page): CI reads three small ones (a JBIG2 page turned 270°, an
 * encrypted JBIG2+JPX scan, page 2 of a CCITT patent scan); OCR_CORPUS_ALL=1 reads all seven. */
const CI_SCANS: Record<string, string | undefined> = {
  'scan-jbig2-xerox-rot270.pdf': undefined,
  'enc-aes128-scan-pdfscanlib.pdf': undefined,
  'enc-rc4-40-epo-scan-invalid-id.pdf': '2',
};
const SCANS = corpus().filter(
  (e) =>
    e.phrases.some((p) => p.startsWith('OCR:')) && (process.env.OCR_CORPUS_ALL === '1' || e.file in CI_SCANS),
);

describe.skipIf(!haveTesseract)('OCR of scanned pages', () => {
  let a: EditApp;
  let fixture: ReturnType<typeof buildScanFixture>;
  beforeAll(async () => {
    fixture = buildScanFixture();
    const served: Record<string, string | Buffer> = { 'fixture.pdf': fixture.pdf };
    for (const e of SCANS) served[e.file] = corpusPath(e.file);
    if (HAVE_CORPUS) served['text.pdf'] = corpusPath('font-tt-subset-libreoffice-trivial.pdf');
    a = await startEditApp(served, 'ocr');
  });
  afterAll(async () => {
    await a?.close();
  });

  const text = (file: string, extra: Record<string, unknown> = {}, password?: string) =>
    a.t.app.inject({
      method: 'POST',
      url: '/v1/text',
      headers: bearer(a.key),
      payload: {
        source: { url: a.files.url(file), ...(password ? { password } : {}) },
        layers: ['text'],
        ...extra,
      },
    });

  it('reads the built scan by OCR: words, boxes, confidences; nothing without ocr', async () => {
    const plain = await text('fixture.pdf');
    expect(plain.statusCode, plain.body).toBe(200);
    expect((plain.json() as TextAnswer).pages[0]!.spans).toEqual([]);
    const res = await text('fixture.pdf', { ocr: true });
    expect(res.statusCode, res.body).toBe(200);
    const page = (res.json() as TextAnswer).pages[0]!;
    expect(page.spans.length).toBeGreaterThan(20);
    for (const s of page.spans) {
      expect(s.source).toBe('ocr');
      expect(s.confidence).toBeGreaterThanOrEqual(0);
      expect(s.confidence).toBeLessThanOrEqual(100);
      expect(s.box[2]).toBeGreaterThan(s.box[0]!);
    }
    const accuracy = wordAccuracy(fixture.lines, page.text);
    console.log(`built scan (1.2° turn, noise, JPEG q70): word accuracy ${(accuracy * 100).toFixed(1)}%`);
    expect(accuracy).toBeGreaterThanOrEqual(0.9);
    // "Hamburg" sits on the third line, inside the page.
    const hamburg = page.spans.find((s) => s.text === 'Hamburg');
    expect(hamburg, page.text).toBeDefined();
  });

  it('refuses a language that is not installed (400 naming it) and ocr_languages without ocr', async () => {
    const res = await text('fixture.pdf', { ocr: true, ocr_languages: ['eng', 'klingon'] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('"klingon"');
    const without = await text('fixture.pdf', { ocr_languages: ['eng'] });
    expect(without.statusCode).toBe(400);
    const edit = await a.edit('fixture.pdf', [{ find: 'x', replace: 'y' }], {
      ocr: true,
      ocr_languages: ['xx'],
    });
    expect(edit.statusCode).toBe(400);
    expect(edit.json().error.message).toContain('"xx"');
  });

  it('replaces a scanned word as pixels: verified, read back, billed five, previews stored', async () => {
    const res = await a.edit('fixture.pdf', [{ find: 'Hamburg', replace: 'Bremen' }], { ocr: true });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.changes).toEqual([
      expect.objectContaining({
        page: 1,
        find: 'Hamburg',
        replace: 'Bremen',
        font_source: 'raster',
        verified: true,
      }),
    ]);
    expect(body.changes[0].collateral_pixels).toBe(0);
    // The line is Times: the serif regular face, told by the strokes and ink of the line.
    expect(body.changes[0].font_used).toBe('LiberationSerif');
    expect(body.usage.pages_billed).toBe(5);
    const out = await a.download(body.output.url);
    for (const [name, url] of [
      ['before', body.changes[0].before_preview_url],
      ['after', body.changes[0].after_preview_url],
    ]) {
      const png = await a.download(url);
      writeFileSync(path.join(a.tmp, `${name}.png`), png);
      if (process.env.OCR_PREVIEWS) writeFileSync(path.join(process.env.OCR_PREVIEWS, `${name}.png`), png);
    }
    const served = await startEditApp({ 'out.pdf': out }, 'ocr-out');
    try {
      const again = await served.t.app.inject({
        method: 'POST',
        url: '/v1/text',
        headers: bearer(served.key),
        payload: { source: { url: served.files.url('out.pdf') }, layers: ['text'], ocr: true },
      });
      const t = (again.json() as TextAnswer).pages[0]!.text;
      expect(t).toContain('Bremen');
      expect(t).not.toContain('Hamburg');
      // Every other word is still read.
      const others = fixture.lines.map((l) => l.replace('Hamburg', ''));
      expect(wordAccuracy(others, t)).toBeGreaterThanOrEqual(0.9);
    } finally {
      await served.close();
    }
  });

  it('bills a batch five per OCR page, and checks its quota at five a page', async () => {
    const batch = (records: Record<string, string>[]) =>
      a.t.app.inject({
        method: 'POST',
        url: '/v1/batch',
        headers: bearer(a.key),
        payload: {
          template: { url: a.files.url('fixture.pdf') },
          edits: [{ find: 'Hamburg', replace: '{city}' }],
          options: { ocr: true },
          records,
        },
      });
    // 50 records of one page: 50 units without OCR (the free plan has 200), 250 with it.
    const tooMany = await batch(Array.from({ length: 50 }, () => ({ city: 'Bremen' })));
    expect(tooMany.statusCode, tooMany.body).toBe(402);
    expect(tooMany.json().error.code).toBe('quota_exceeded');
    expect(tooMany.json().usage.pages_needed).toBe(250);

    const res = await batch([{ city: 'Bremen' }, { city: 'Berlin' }]);
    expect(res.statusCode, res.body).toBe(202);
    const jobId = res.json().job_id as string;
    const job = await waitForJob(a.t.app, a.key, jobId);
    expect(job.status, JSON.stringify(job)).toBe('done');
    const records = job.records as { status: string; pages: number; ocr_pages: number; changes: unknown[] }[];
    for (const r of records) {
      expect(r).toMatchObject({ status: 'done', pages: 5, ocr_pages: 1 });
      expect(r.changes).toEqual([expect.objectContaining({ font_source: 'raster', verified: true })]);
    }
    expect(job.pages_billed).toBe(10);
    expect(job.usage).toMatchObject({ pages_billed: 10 });
    // The ledger row keeps the page and OCR page counts apart.
    const row = await a.t.app.db
      .withTables<BillingSchema>()
      .selectFrom('usage_charges')
      .select(['pages', 'ocr_pages', 'billed'])
      .where('work_id', '=', jobId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ pages: 2, ocr_pages: 2, billed: 10 });
  });

  it('redraws a word of a Helvetica line in the sans regular face', async () => {
    const res = await a.edit('fixture.pdf', [{ find: 'Customer', replace: 'Patron' }], { ocr: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().changes).toEqual([
      expect.objectContaining({ font_source: 'raster', verified: true, font_used: 'LiberationSans' }),
    ]);
  });

  it("gives the OCR'd page an invisible text layer with ocr_text_layer", async () => {
    const res = await a.edit('fixture.pdf', [{ op: 'delete', find: 'Tuesday' }], {
      ocr: true,
      ocr_text_layer: true,
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.changes).toEqual([expect.objectContaining({ op: 'delete', font_source: 'raster' })]);
    expect(body.warnings).toContain('ocr_text_layer');
    // Each word is laid level over its box with no space glyph between words: on this page
    // turned by 1.2 degrees pdftotext orders some words of a line differently and glues a few
    // to their neighbour ("Hamburgon"), so words are compared, not lines (measured: 86%).
    const layer = a.textOf(await a.download(body.output.url));
    const others = fixture.lines.map((l) => l.replace('Tuesday', ''));
    expect(wordAccuracy(others, layer)).toBeGreaterThanOrEqual(0.8);
    expect(layer).not.toContain('Tuesday');
  });

  it('refuses to redact a scanned word (scanned_text, 422)', async () => {
    const res = await a.edit('fixture.pdf', [{ op: 'redact', find: 'Tuesday' }], { ocr: true });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().failed).toEqual([expect.objectContaining({ reason: 'scanned_text' })]);
  });

  it.skipIf(!HAVE_CORPUS)('does not OCR or surcharge a page that has text', async () => {
    const res = await a.edit(
      'text.pdf',
      [{ find: 'takimata', replace: 'takimatu', scope: { occurrence: 'first' } }],
      {
        ocr: true,
      },
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().changes[0].font_source).not.toBe('raster');
    expect(res.json().usage.pages_billed).toBe(1);
    const read = await text('text.pdf', { ocr: true });
    expect(read.statusCode, read.body).toBe(200);
    expect((read.json() as TextAnswer).pages.flatMap((p) => p.spans).some((s) => s.source === 'ocr')).toBe(
      false,
    );
    // Nothing was read by OCR: the cache of OCR'd pages holds nothing for the document.
    const cache = ocrCacheFor(a.t.app.config);
    expect(
      cache.get(OcrCache.docKey(readFileSync(corpusPath('font-tt-subset-libreoffice-trivial.pdf'))), 'eng'),
    ).toEqual([]);
  });

  it.skipIf(!HAVE_CORPUS)(
    'reads the corpus scans: word accuracy against the manifest phrases',
    async () => {
      const rows: string[] = [];
      let sum = 0;
      for (const e of SCANS) {
        const expected = e.phrases.filter((p) => p.startsWith('OCR:')).map((p) => p.slice(4));
        const started = Date.now();
        const pages = process.env.OCR_CORPUS_ALL === '1' ? undefined : CI_SCANS[e.file];
        const res = await text(e.file, { ocr: true, ...(pages ? { pages } : {}) }, e.userPassword);
        expect(res.statusCode, `${e.file}: ${res.body}`).toBe(200);
        const answer = res.json() as TextAnswer;
        const all = answer.pages.map((p) => p.text).join('\n');
        const accuracy = wordAccuracy(expected, all);
        sum += accuracy;
        const ocrSpans = answer.pages.flatMap((p) => p.spans).filter((s) => s.source === 'ocr').length;
        rows.push(
          `| ${e.file} | ${e.pages} | ${ocrSpans} | ${(accuracy * 100).toFixed(0)}% | ${Date.now() - started} ms | ${expected.join(' / ')} |`,
        );
      }
      console.log(
        [
          '| document | pages | OCR words | phrase word accuracy | time | phrases |',
          '|---|---|---|---|---|---|',
          ...rows,
        ].join('\n'),
      );
      expect(sum / SCANS.length).toBeGreaterThanOrEqual(0.7);
    },
    300_000,
  );
});

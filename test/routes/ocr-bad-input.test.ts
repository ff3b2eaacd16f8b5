import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHugeBilevelScan, buildScanFixture, truncatedScan } from '../../fixtures/scan/generate.js';
import { installedOcrLanguages } from '../../src/engine/ocr-cache.js';
import { ERROR_STATUS } from '../../src/kernel/error-codes.js';
import { bearer } from '../helpers/app.js';
import { type EditApp, startEditApp } from '../helpers/edit-app.js';

/** Issue 19, bad input: hostile scans over HTTP end in a typed error or a bounded answer,
 * never a crash, and bill nothing unless a page was really edited. */

const haveTesseract = installedOcrLanguages().includes('eng');

describe.skipIf(!haveTesseract)('OCR on hostile scans', () => {
  let a: EditApp;
  beforeAll(async () => {
    a = await startEditApp(
      {
        'huge.pdf': buildHugeBilevelScan(),
        'truncated.pdf': truncatedScan(0.6),
        'fixture.pdf': buildScanFixture().pdf,
      },
      'ocr-bad',
    );
  });
  afterAll(async () => {
    await a?.close();
  });

  const used = async () => {
    const res = await a.t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(a.key) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().pages_used as number;
  };
  const text = (file: string, extra: Record<string, unknown> = {}) =>
    a.t.app.inject({
      method: 'POST',
      url: '/v1/text',
      headers: bearer(a.key),
      payload: { source: { url: a.files.url(file) }, layers: ['text'], ...extra },
    });
  /** A typed error of SPEC's closed list, or a success. */
  const typed = (res: { statusCode: number; json(): { error?: { code: string } } }) => {
    if (res.statusCode === 200) return 'ok';
    const code = res.json().error?.code;
    expect(code && code in ERROR_STATUS, JSON.stringify(res.json())).toBe(true);
    expect(ERROR_STATUS[code as keyof typeof ERROR_STATUS]).toBe(res.statusCode);
    return code;
  };

  it('a 1-bit page of 20,000 × 20,000 pixels: read on a capped render, edited in bounded time, billed five', async () => {
    const before = await used();
    let started = Date.now();
    const read = await text('huge.pdf', { ocr: true });
    const readMs = Date.now() - started;
    expect(typed(read)).toBe('ok');
    // The render is capped in pixels (24 M), so the words drawn eight times larger read.
    const words = (read.json().pages[0].spans as { text: string; source: string }[]).map((s) => s.text);
    expect(words).toContain('Hamburg');
    started = Date.now();
    const edit = await a.edit('huge.pdf', [{ find: 'Hamburg', replace: 'Bremen' }], { ocr: true });
    const editMs = Date.now() - started;
    expect(typed(edit), edit.body).toBe('ok');
    console.log(`huge 1-bit page: /v1/text ocr ${readMs} ms, /v1/edit ocr ${editMs} ms`);
    // Bounded: well inside the OCR budget of one page (60 s) for each.
    expect(readMs).toBeLessThan(60_000);
    expect(editMs).toBeLessThan(60_000);
    const body = edit.json();
    expect(body.changes).toEqual([
      expect.objectContaining({ font_source: 'raster', verified: true, collateral_pixels: 0 }),
    ]);
    expect(body.usage.pages_billed).toBe(5);
    expect(await used()).toBe(before + 5);
    // The 400-million-pixel image is written back compressed, not as raw samples.
    const out = await a.download(body.output.url);
    expect(out.length).toBeLessThan(2_000_000);
    // The service still answers.
    expect((await text('fixture.pdf')).statusCode).toBe(200);
  }, 240_000);

  it('a scan whose JPEG data stops short: a typed answer, nothing billed when nothing changed', async () => {
    const before = await used();
    const read = await text('truncated.pdf', { ocr: true });
    expect(typed(read)).toBe('ok');
    const edit = await a.edit('truncated.pdf', [{ find: 'Hamburg', replace: 'Bremen' }], { ocr: true });
    // PDFium draws the rows it could decode (OCR finds the word); the engine's own decoder
    // cannot write the image back: the edit fails closed, typed, and bills nothing.
    expect(typed(edit)).toBe('edit_failed');
    expect(edit.json().failed).toEqual([
      expect.objectContaining({ op: 'replace', reason: 'image_unsupported' }),
    ]);
    expect(await used()).toBe(before);
  }, 120_000);
});

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config.js';
import { bearer, type TestApp } from '../helpers/app.js';
import { corpus, pngSize } from '../helpers/corpus.js';
import { startCorpusApp } from '../helpers/corpus-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import type { FileServer } from '../helpers/serve.js';

const LIMIT = 200 * 1024;

describe.skipIf(!HAVE_CORPUS)('POST /v1/preview', () => {
  let t: TestApp;
  let key: string;
  let files: FileServer;
  const entries = corpus();
  beforeAll(async () => {
    ({ t, key, files } = await startCorpusApp());
  });
  afterAll(async () => {
    await files?.close();
    await t?.close();
  });

  const preview = (file: string, extra: Record<string, unknown> = {}, password?: string) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/preview',
      headers: bearer(key),
      payload: { source: { url: files.url(file), ...(password ? { password } : {}) }, ...extra },
    });

  it('renders the first page of every corpus file as a PNG within 200 KB and the page aspect', async () => {
    const textApi = async (file: string, password?: string) =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/v1/text',
          headers: bearer(key),
          payload: {
            source: { url: files.url(file), ...(password ? { password } : {}) },
            pages: [1],
            layers: ['text'],
          },
        })
      ).json();
    for (const e of entries) {
      const password = e.userPassword ?? e.ownerPassword;
      const res = await preview(e.file, {}, password);
      expect(res.statusCode, e.file).toBe(200);
      expect(res.headers['content-type']).toBe('image/png');
      expect(res.rawPayload.length, e.file).toBeLessThanOrEqual(LIMIT);
      const { width, height } = pngSize(res.rawPayload);
      const page = (await textApi(e.file, password)).pages[0];
      const expected = page.width / page.height;
      // One pixel of rounding on either side.
      expect(Math.abs(width / height - expected), e.file).toBeLessThan(
        expected * (2 / Math.min(width, height)) + 0.01,
      );
    }
  });

  it('honours width, and keeps dense pages under the byte budget at the largest width', async () => {
    const small = await preview('font-type1-pdftex-tracemonkey-2col.pdf', { width: 300 });
    expect(pngSize(small.rawPayload).width).toBe(300);
    const big = await preview('font-type1-pdftex-tracemonkey-2col.pdf', { width: 2000 });
    expect(big.statusCode).toBe(200);
    expect(big.rawPayload.length).toBeLessThanOrEqual(LIMIT);
    const scan = await preview('scan-linn-brochure-2col-tiff2pdf.pdf', { width: 2000 });
    expect(scan.rawPayload.length).toBeLessThanOrEqual(LIMIT);
  });

  it('renders a region with highlight boxes at the region aspect', async () => {
    const res = await preview('doc-invoice-itextsharp-demo.pdf', {
      region: [50, 50, 350, 200],
      highlights: [[60, 60, 200, 90]],
      width: 600,
    });
    expect(res.statusCode).toBe(200);
    const { width, height } = pngSize(res.rawPayload);
    expect(width).toBe(600);
    expect(Math.abs(height - 300)).toBeLessThanOrEqual(1);
    // Kept for eyes: git-ignored diffs/ folder.
    const out = path.join(PROJECT_ROOT, 'diffs');
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, 'preview-region.png'), res.rawPayload);
  });

  it('refuses pages past the end and inverted boxes with 400', async () => {
    const page = await preview('font-tt-subset-libreoffice-trivial.pdf', { page: 2 });
    expect(page.statusCode).toBe(400);
    const region = await preview('font-tt-subset-libreoffice-trivial.pdf', { region: [100, 100, 50, 200] });
    expect(region.statusCode).toBe(400);
    expect(region.json().error.code).toBe('invalid_request');
  });

  it('renders rotated pages as displayed (a portrait MediaBox with /Rotate 90 shows landscape)', async () => {
    // Page 1: 842x595 MediaBox, no rotation. Page 2: 595x842 MediaBox with /Rotate 90.
    const p1 = pngSize((await preview('rot-0-90-180-270-pages.pdf', { page: 1, width: 500 })).rawPayload);
    const p2 = pngSize((await preview('rot-0-90-180-270-pages.pdf', { page: 2, width: 500 })).rawPayload);
    expect(p1.width).toBeGreaterThan(p1.height);
    expect(p2.width).toBeGreaterThan(p2.height);
    expect(Math.abs(p2.height - Math.round((500 * 595) / 842))).toBeLessThanOrEqual(1);
  });
});

/**
 * OCR (issue 19): time to read one scanned page by OCR (`/v1/text` with ocr, no cache) and
 * one verified raster replace on a scanned page (with the page's OCR cached, as after a
 * find), through the engine pool.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildScanFixture } from '../fixtures/scan/generate.js';
import type { OcrPage } from '../native/index.js';
import type { EnginePool } from '../src/engine/pool.js';

export async function benchOcr(pool: EnginePool, corpus: string): Promise<string[][]> {
  const rows: string[][] = [];
  const fixture = buildScanFixture();
  const pages: { name: string; pdf: Buffer }[] = [
    { name: 'built scan (JPEG, 420x300 pt)', pdf: fixture.pdf },
    {
      name: 'linn brochure (JBIG2, letter)',
      pdf: readFileSync(path.join(corpus, 'scan-linn-brochure-2col-tiff2pdf.pdf')),
    },
  ];
  for (const p of pages) {
    const ms: number[] = [];
    let read: OcrPage[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = process.hrtime.bigint();
      const r = await pool.readText({
        pdf: p.pdf,
        pages: [1],
        text: true,
        forms: false,
        ocr: { languages: ['eng'], cached: [] },
      });
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
      read = r.ocr ?? [];
    }
    ms.sort((a, b) => a - b);
    rows.push([
      'OCR one page (text, no cache)',
      p.name,
      ms[1]!.toFixed(0),
      ms[2]!.toFixed(0),
      `${read[0]?.words.length ?? 0} words`,
    ]);
  }
  const ms: number[] = [];
  let note = '';
  for (let i = 0; i < 3; i++) {
    const cached = (
      await pool.readText({
        pdf: fixture.pdf,
        pages: [1],
        text: true,
        forms: false,
        ocr: { languages: ['eng'], cached: [] },
      })
    ).ocr;
    const t0 = process.hrtime.bigint();
    const r = await pool.edit({
      pdf: fixture.pdf,
      edits: [{ index: 0, op: 'replace', find: 'Hamburg', replace: 'Bremen' }],
      options: {
        font: { policy: 'prefer_exact' },
        break_signature: false,
        ocr: true,
        ocr_languages: ['eng'],
        ocr_cached: cached,
      },
    });
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    note =
      r.changes.length === 1 ? `applied, font ${r.changes[0]!.font_used}` : `failed: ${r.failed[0]?.reason}`;
  }
  ms.sort((a, b) => a - b);
  rows.push(['raster replace (OCR cached)', 'built scan', ms[1]!.toFixed(0), ms[2]!.toFixed(0), note]);
  return rows;
}

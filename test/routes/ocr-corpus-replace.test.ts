import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installedOcrLanguages } from '../../src/engine/ocr-cache.js';
import { corpusPath } from '../helpers/corpus.js';
import { type EditApp, startEditApp } from '../helpers/edit-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';

/**
 * Issue 19: a word of a corpus scan (no text layer) replaced as pixels, checked from
 * outside the engine: Poppler renders before and after (nothing outside the word's box
 * changes) and Tesseract reads the new word in the after-render.
 */

const haveTesseract = installedOcrLanguages().includes('eng');
const DPI = 150;

interface Gray {
  w: number;
  h: number;
  px: Buffer;
}

function readPgm(file: string): Gray {
  const bytes = readFileSync(file);
  const m = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(bytes.subarray(0, 64).toString('latin1'));
  if (!m) throw new Error(`${file}: not a PGM`);
  const w = Number(m[1]);
  const h = Number(m[2]);
  return { w, h, px: bytes.subarray(m[0].length, m[0].length + w * h) };
}

/** Poppler's grey render of page 1 at `dpi` into `dir/name.pgm`. */
function render(dir: string, pdf: string, name: string, dpi: number): Gray {
  execFileSync('pdftoppm', ['-r', String(dpi), '-gray', '-singlefile', pdf, path.join(dir, name)]);
  return readPgm(path.join(dir, `${name}.pgm`));
}

const CASES = [{ file: 'scan-linn-brochure-2col-tiff2pdf.pdf', find: 'performance', replace: 'pertinence' }];
// Not yet: on scan-rotated-skewed.pdf (the same brochure on a page turned by /Rotate 90,
// skewed and with curved lines) the words tried ("powerful", "amazingly", "synthesizers",
// "remarkable") are still rolled back by read-back, even now that the word is measured and
// drawn along the page's skew (OCR reads parts: "skin" for "strikingly", "rum" for
// "instruments").

describe.skipIf(!haveTesseract || !HAVE_CORPUS)(
  'replace on corpus scans, checked by Poppler and Tesseract',
  () => {
    let a: EditApp;
    beforeAll(async () => {
      a = await startEditApp(
        Object.fromEntries(CASES.map((c) => [c.file, corpusPath(c.file)])),
        'ocr-corpus',
      );
    });
    afterAll(async () => {
      await a?.close();
    });

    for (const c of CASES) {
      it(`${c.file}: "${c.find}" → "${c.replace}"`, async () => {
        const started = Date.now();
        const res = await a.edit(
          c.file,
          [{ find: c.find, replace: c.replace, scope: { occurrence: 'first' } }],
          {
            ocr: true,
          },
        );
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json();
        expect(body.status).toBe('done');
        expect(body.changes).toEqual([
          expect.objectContaining({ font_source: 'raster', verified: true, collateral_pixels: 0 }),
        ]);
        const box = body.changes[0].box as [number, number, number, number];
        const outFile = path.join(a.tmp, `out-${c.file}`);
        writeFileSync(outFile, await a.download(body.output.url));

        // Every pixel of Poppler's render outside the word's box (one pixel of slack) is unchanged.
        const before = render(a.tmp, corpusPath(c.file), `before-${c.file}`, DPI);
        const after = render(a.tmp, outFile, `after-${c.file}`, DPI);
        expect([after.w, after.h]).toEqual([before.w, before.h]);
        const s = DPI / 72;
        const [x0, y0, x1, y1] = [
          Math.floor(box[0] * s) - 1,
          Math.floor(box[1] * s) - 1,
          Math.ceil(box[2] * s) + 1,
          Math.ceil(box[3] * s) + 1,
        ];
        let outside = 0;
        let inside = 0;
        for (let y = 0; y < before.h; y++) {
          for (let x = 0; x < before.w; x++) {
            const i = y * before.w + x;
            if (before.px[i] === after.px[i]) continue;
            if (x >= x0 && x < x1 && y >= y0 && y < y1) inside++;
            else outside++;
          }
        }
        expect(outside).toBe(0);
        expect(inside).toBeGreaterThan(50);

        // Tesseract reads the new word in a 300 dpi crop of the after-render around the box.
        const hi = 300 / 72;
        const pad = (box[3] - box[1]) * 0.6;
        const crop = [box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad].map((v) =>
          Math.max(0, Math.round(v * hi)),
        );
        execFileSync('pdftoppm', [
          '-r',
          '300',
          '-gray',
          '-singlefile',
          '-x',
          String(crop[0]),
          '-y',
          String(crop[1]),
          '-W',
          String(crop[2]! - crop[0]!),
          '-H',
          String(crop[3]! - crop[1]!),
          outFile,
          path.join(a.tmp, `crop-${c.file}`),
        ]);
        const read = execFileSync('tesseract', [path.join(a.tmp, `crop-${c.file}.pgm`), '-', '--psm', '7'], {
          encoding: 'utf8',
          env: { ...process.env, OMP_THREAD_LIMIT: '1' },
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        // OCR_CROPS=dir keeps 300 dpi before/after crops around the word (wider than the box) to look at.
        const keep = process.env.OCR_CROPS;
        if (keep) {
          const wide = [box[0] - 8 * pad, box[1] - 2 * pad, box[2] + 8 * pad, box[3] + 2 * pad].map((v) =>
            Math.max(0, Math.round(v * hi)),
          );
          for (const [name, pdf] of [
            ['before', corpusPath(c.file)],
            ['after', outFile],
          ] as const) {
            execFileSync('pdftoppm', [
              '-r',
              '300',
              '-png',
              '-singlefile',
              '-x',
              String(wide[0]),
              '-y',
              String(wide[1]),
              '-W',
              String(wide[2]! - wide[0]!),
              '-H',
              String(wide[3]! - wide[1]!),
              pdf,
              path.join(keep, `${c.file.replace(/\.pdf$/, '')}-${c.find}-${name}`),
            ]);
          }
        }
        expect(read).toContain(c.replace);
        expect(read).not.toContain(c.find);
        const ms = Date.now() - started;
        console.log(
          `${c.file}: "${c.find}" → "${c.replace}" read back as ${JSON.stringify(read.trim())}, ${ms} ms`,
        );
        expect(ms).toBeLessThan(30_000);
      }, 60_000);
    }
  },
);

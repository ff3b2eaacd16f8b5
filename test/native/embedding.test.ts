import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { PROJECT_ROOT } from '../../src/engine/root.js';
import { corpusPath, pdftotext, pdftotextAvailable } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const run = promisify(execFile);
const INVOICE = 'doc-invoice-itextsharp-demo.pdf';
/** The README's example: the addon used through its package entry (`require('..')`). */
const SCRIPT = path.join(PROJECT_ROOT, 'native', 'examples', 'embed.cjs');

interface Summary {
  thread: 'main' | 'worker';
  pageCount: number;
  page1: string;
  spans: number;
  png: { bytes: number; signature: string };
  changes: {
    op: string;
    page: number;
    find: string;
    replace: string;
    verified: boolean;
    font_source: string;
  }[];
  unmatched: unknown[];
  failed: unknown[];
  pagesTouched: number[];
  outputBytes: number;
  page1After?: string;
  error?: { code: string; message: string };
}

/**
 * Issue 15 item 6: the addon is a Node library of its own. A plain `node` process (no
 * service code, no TypeScript) opens, reads, renders and edits a corpus invoice through
 * the package's public entry, on the main thread and inside a worker_threads Worker.
 */
describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable())('the addon embedded in a plain Node program', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pdfedit-embed-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function embed(mode: 'main' | 'worker'): Promise<{ summary: Summary; output: string }> {
    const output = path.join(dir, `${mode}.pdf`);
    const args = [SCRIPT, corpusPath(INVOICE), 'Bayside Wholesale', 'Baysider Wholesale', output];
    if (mode === 'worker') args.push('--thread');
    const { stdout } = await run(process.execPath, args, {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', PDFIUM_LIB_PATH: loadConfig({}).pdfiumLibPath },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { summary: JSON.parse(stdout) as Summary, output };
  }

  for (const mode of ['main', 'worker'] as const) {
    it(`opens, reads, renders and edits on the ${mode} thread`, async () => {
      const { summary, output } = await embed(mode);
      expect(summary.thread).toBe(mode);
      expect(summary.pageCount).toBe(1);
      expect(summary.page1).toContain('Bayside Wholesale');
      expect(summary.page1).toContain('INV-0046');
      expect(summary.spans).toBeGreaterThan(20);
      expect(summary.png.signature).toBe('PNG');
      expect(summary.png.bytes).toBeGreaterThan(10_000);

      expect(summary.changes).toEqual([
        {
          op: 'replace',
          page: 1,
          find: 'Bayside Wholesale',
          replace: 'Baysider Wholesale',
          verified: true,
          font_source: 'exact-embedded',
        },
      ]);
      expect(summary.unmatched).toEqual([]);
      expect(summary.failed).toEqual([]);
      expect(summary.pagesTouched).toEqual([1]);
      expect(summary.page1After).toContain('Baysider Wholesale');

      // The output read by poppler: the first occurrence changed, the second kept.
      const text = pdftotext(output).replace(/\s+/g, ' ');
      expect(text).toContain('Baysider Wholesale');
      expect(text).toContain('Customer Bayside Wholesale');

      // A thrown error carries the service's stable code.
      expect(summary.error?.code).toBe('document_unsupported');
    });
  }
});

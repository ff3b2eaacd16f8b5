import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { writeOutputFile } from '../../src/engine/output-file.js';
import { EnginePool } from '../../src/engine/pool.js';
import { corpusPath } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const PDFIUM = loadConfig({}).pdfiumLibPath;
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

// Issue 18 items 3 and 5: an edit's output written by the engine process under the key
// its row reserved, so its bytes never cross the IPC channel to the API process.
describe('engine process writes the output itself', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'pdfedit-outfile-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the whole file under the key, with its size and digest, and no temp file left', () => {
    const blobs = path.join(dir, 'unit', 'blobs');
    const bytes = Buffer.from('%PDF-1.7\nhello\n%%EOF\n');
    const w = writeOutputFile(blobs, 'file_abc-123', bytes);
    expect(w).toEqual({ size: bytes.length, sha256: sha(bytes) });
    expect(readFileSync(path.join(blobs, 'file_abc-123'))).toEqual(bytes);
    expect(readdirSync(blobs)).toEqual(['file_abc-123']);
  });

  it('refuses a key that names anything outside the directory, and a relative directory', () => {
    const blobs = path.join(dir, 'refuse', 'blobs');
    for (const key of ['../escaped', '/etc/passwd', 'a/b', '.tmp-x', '..', '']) {
      expect(() => writeOutputFile(blobs, key, Buffer.from('x'))).toThrow(/invalid blob key/);
    }
    expect(() => writeOutputFile('relative/blobs', 'file_ok', Buffer.from('x'))).toThrow(/absolute/);
    expect(existsSync(path.join(dir, 'refuse', 'escaped'))).toBe(false);
    expect(existsSync(path.join(dir, 'refuse', 'blobs'))).toBe(false);
  });

  it('leaves no half file under the key when its process is killed (-9) mid-write', async () => {
    const blobs = path.join(dir, 'kill', 'blobs');
    const mod = path.resolve('dist/src/engine/output-file.js');
    // 256 MiB written in one call: the kill lands while the temp file grows.
    const script = `import(${JSON.stringify(mod)}).then((m) => m.writeOutputFile(${JSON.stringify(blobs)}, 'file_killed', Buffer.alloc(256 * 1024 * 1024, 7)))`;
    const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    const end = Date.now() + 20_000;
    const temps = () => (existsSync(blobs) ? readdirSync(blobs).filter((f) => f.startsWith('.tmp-')) : []);
    while (temps().length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
    expect(temps()).toHaveLength(1);
    child.kill('SIGKILL');
    await exited;
    // Killed before the rename: the key was never visible; only the dot-file the sweep removes.
    expect(existsSync(path.join(blobs, 'file_killed'))).toBe(false);
    expect(temps()).toHaveLength(1);
  }, 30_000);

  describe.skipIf(!HAVE_CORPUS)('through the pool', () => {
    let pool: EnginePool | undefined;
    afterEach(async () => {
      await pool?.close();
      pool = undefined;
    });
    const pdf = () => readFileSync(corpusPath('doc-invoice-itextsharp-demo.pdf'));
    const task = (output?: string, find = 'INV-0046') => ({
      pdf: pdf(),
      edits: [{ index: 0, op: 'replace' as const, find, replace: 'INV-0064' }],
      options: { lazy_previews: true },
      ...(output !== undefined ? { output } : {}),
    });

    it('answers with the size and digest instead of the bytes, which are on disk whole', async () => {
      const blobs = path.join(dir, 'pool', 'blobs');
      pool = new EnginePool({ pdfiumLibPath: PDFIUM, processes: 1, timeoutMs: 60_000, outputDir: blobs });
      const sent = await pool.edit(task());
      expect(sent.written).toBeUndefined();
      expect(sent.pdf.byteLength).toBeGreaterThan(1000);
      const direct = await pool.edit(task('file_direct-1'));
      expect(direct.pdf.byteLength).toBe(0);
      const onDisk = readFileSync(path.join(blobs, 'file_direct-1'));
      // The same output as the bytes sent back (edits are deterministic).
      expect(sha(onDisk)).toBe(sha(sent.pdf));
      expect(direct.written).toEqual({ size: onDisk.length, sha256: sha(onDisk) });
      expect(direct.changes).toEqual(sent.changes);
      expect(readdirSync(blobs)).toEqual(['file_direct-1']);
    });

    it('writes nothing for an edit that changed nothing, and sends the bytes back for a bad key', async () => {
      const blobs = path.join(dir, 'pool2', 'blobs');
      pool = new EnginePool({ pdfiumLibPath: PDFIUM, processes: 1, timeoutMs: 60_000, outputDir: blobs });
      const unmatched = await pool.edit(task('file_nothing', 'no such phrase anywhere'));
      expect(unmatched.changes).toEqual([]);
      expect(unmatched.written).toBeUndefined();
      expect(existsSync(path.join(blobs, 'file_nothing'))).toBe(false);
      // A key that is not a blob key is never written: the reply keeps the bytes.
      const bad = await pool.edit(task('../outside'));
      expect(bad.written).toBeUndefined();
      expect(bad.pdf.byteLength).toBeGreaterThan(1000);
      expect(existsSync(path.join(dir, 'pool2', 'outside'))).toBe(false);
    });

    it('sends the bytes back when the pool has no output directory (an object store)', async () => {
      pool = new EnginePool({ pdfiumLibPath: PDFIUM, processes: 1, timeoutMs: 60_000 });
      const r = await pool.edit(task('file_nowhere'));
      expect(r.written).toBeUndefined();
      expect(r.pdf.byteLength).toBeGreaterThan(1000);
    });
  });
});

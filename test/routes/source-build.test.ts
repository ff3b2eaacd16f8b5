import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';

/** Every COPY source of a Dockerfile that reads the build context (not `--from=`). */
function copySources(dockerfile: string): string[] {
  const sources: string[] = [];
  for (const line of dockerfile.split('\n')) {
    const words = line.trim().split(/\s+/);
    if (words[0] !== 'COPY' || words.some((w) => w.startsWith('--from'))) continue;
    const args = words.slice(1).filter((w) => !w.startsWith('--'));
    sources.push(...args.slice(0, -1));
  }
  return sources;
}

function filesUnder(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...filesUnder(dir, child));
    else out.push(child);
  }
  return out;
}

const HAVE_CARGO = spawnSync('cargo', ['--version']).status === 0;

describe('GET /source builds on its own', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    t = await startApp('sqlite');
    const key = await t.newKey('srcbuild@example.com', 'free', 'test');
    const res = await t.app.inject({ method: 'GET', url: '/source', headers: bearer(key) });
    expect(res.statusCode).toBe(200);
    dir = mkdtempSync(path.join(tmpdir(), 'pdfedit-source-'));
    execFileSync('tar', ['-xz', '-C', dir], { input: res.rawPayload });
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds every path its Dockerfile.engine copies, and the worker imports only what it holds', () => {
    const dockerfile = readFileSync(path.join(dir, 'Dockerfile.engine'), 'utf8');
    const sources = copySources(dockerfile);
    expect(sources.length).toBeGreaterThan(5);
    for (const s of sources) {
      const full = path.join(dir, s);
      expect(existsSync(full), `COPY ${s}`).toBe(true);
      if (statSync(full).isDirectory()) expect(filesUnder(full).length, `COPY ${s}`).toBeGreaterThan(0);
    }
    // The fetch script is run directly by the build: it keeps its executable bit.
    expect(statSync(path.join(dir, 'scripts/fetch-pdfium.sh')).mode & 0o111).not.toBe(0);
    // Every relative import of the published TypeScript resolves inside the archive: to a
    // TypeScript source, or to the addon's generated loader and its declarations.
    const ts = filesUnder(dir).filter((p) => p.endsWith('.ts') && p.startsWith('src/'));
    expect(ts).toContain('src/engine/worker.ts');
    for (const file of ts) {
      const text = readFileSync(path.join(dir, file), 'utf8');
      for (const m of text.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)) {
        const base = path.join(dir, path.dirname(file), m[1] ?? '');
        const resolves = existsSync(`${base}.ts`) || (existsSync(`${base}.d.ts`) && existsSync(`${base}.js`));
        expect(resolves, `${file} imports ${m[1]}`).toBe(true);
      }
    }
    // Every crate the workspace lists is there, with the lockfile cargo needs offline.
    for (const p of ['Cargo.lock', 'package-lock.json', 'LICENSE', 'native/Cargo.toml']) {
      expect(existsSync(path.join(dir, p)), p).toBe(true);
    }
  });

  it.skipIf(!HAVE_CARGO)(
    'builds the engine offline and type-checks the worker',
    () => {
      // The repository's target folder is shared so the dependencies (the same versions,
      // from the same lockfile) are not compiled again; the four workspace crates are,
      // from the archive's copy.
      const started = Date.now();
      const build = spawnSync('cargo', ['build', '--offline', '--release', '-p', 'pdfedit-engine'], {
        cwd: dir,
        env: { ...process.env, CARGO_TARGET_DIR: path.join(PROJECT_ROOT, 'target') },
        encoding: 'utf8',
        timeout: 280_000,
      });
      const cargoMs = Date.now() - started;
      expect(build.status, build.stderr.slice(-3000)).toBe(0);
      // It compiled the archive's sources, not the repository's.
      expect(build.stderr).toContain(`pdfedit-engine v0.1.0 (${dir}/crates/pdfedit-engine)`);
      symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(dir, 'node_modules'));
      const tsStarted = Date.now();
      const tsc = spawnSync(
        path.join(PROJECT_ROOT, 'node_modules/.bin/tsc'),
        ['-p', 'tsconfig.engine.json', '--noEmit'],
        { cwd: dir, encoding: 'utf8', timeout: 120_000 },
      );
      expect(tsc.status, `${tsc.stdout}${tsc.stderr}`).toBe(0);
      console.log(`source build: cargo ${cargoMs} ms, tsc ${Date.now() - tsStarted} ms`);
    },
    420_000,
  );
});

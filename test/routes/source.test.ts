import { execFileSync } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, startApp, type TestApp } from '../helpers/app.js';

describe('GET /source', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('sqlite');
  });
  afterAll(async () => t?.close());

  it('needs a key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/source' });
    expect(res.statusCode).toBe(401);
  });

  it('serves the engine source as gzip tar to a test key, without the gateway', async () => {
    const key = await t.newKey('src@example.com', 'free', 'test');
    const res = await t.app.inject({ method: 'GET', url: '/source', headers: bearer(key) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/gzip');
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    const tar = gunzipSync(res.rawPayload);
    // The system tar reads it: the archive is standard ustar.
    const list = execFileSync('tar', ['-t'], { input: tar }).toString().trim().split('\n');
    for (const required of [
      'Cargo.toml',
      'Cargo.lock',
      'Dockerfile.engine',
      'LICENSE',
      'package-lock.json',
      'scripts/fetch-pdfium.sh',
      'native/Cargo.toml',
      'native/build.rs',
      'native/index.d.ts',
      'native/index.js',
      'native/package.json',
      'native/src/lib.rs',
      'src/engine/worker.ts',
    ]) {
      expect(list, required).toContain(required);
    }
    expect(list.some((p) => p.startsWith('crates/') && p.endsWith('/Cargo.toml'))).toBe(true);
    expect(list.some((p) => p.startsWith('crates/') && p.endsWith('.rs'))).toBe(true);
    // Of the rest of src/, only the error type and codes the worker imports; never
    // configuration, routes, keys, billing or storage.
    const gateway = list.filter((p) => p.startsWith('src/') && !p.startsWith('src/engine/'));
    expect(gateway).toEqual([
      'src/kernel/api-error.ts',
      'src/kernel/blob-file.ts',
      'src/kernel/blob-key.ts',
      'src/kernel/error-codes.ts',
    ]);
    // The whole-service Dockerfile builds the gateway, which the archive does not hold.
    expect(list).not.toContain('Dockerfile');
    expect(list.some((p) => p.includes('/target/') || p.endsWith('.node'))).toBe(false);
    const license = execFileSync('tar', ['-xO', 'LICENSE'], { input: tar }).toString();
    expect(license).toMatch(/GNU AFFERO GENERAL PUBLIC LICENSE/);
  });
});

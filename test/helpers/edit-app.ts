import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { bearer, startApp, type TestApp } from './app.js';
import { pdftotext } from './corpus.js';
import { type FileServer, serveFiles } from './serve.js';

/** The service with a key, a few files served on loopback for `source.url`, and a scratch folder. */
export interface EditApp {
  t: TestApp;
  key: string;
  files: FileServer;
  /** Scratch folder, removed by `close`. */
  tmp: string;
  /** `POST /v1/edit` on served file `file`. */
  edit(
    file: string,
    edits: unknown[],
    options?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  /** Downloads an output through its signed link, as a client would (expects 200). */
  download(url: string): Promise<Buffer>;
  /** Writes `pdf` into the scratch folder; its path. */
  save(pdf: Buffer): string;
  /** `pdftotext` of `pdf`, as it prints it. */
  textOf(pdf: Buffer): string;
  close(): Promise<void>;
}

/**
 * Starts the service (SQLite, private URLs allowed for the loopback file server) and serves
 * `served` (name → path of a file, or the bytes of a PDF built by the test, written into the
 * scratch folder first).
 */
export async function startEditApp(
  served: Record<string, string | Buffer>,
  prefix: string,
): Promise<EditApp> {
  const tmp = mkdtempSync(path.join(tmpdir(), `pdfedit-${prefix}-`));
  const paths: Record<string, string> = {};
  for (const [name, src] of Object.entries(served)) {
    if (typeof src === 'string') {
      paths[name] = src;
    } else {
      paths[name] = path.join(tmp, path.basename(name));
      writeFileSync(paths[name], src);
    }
  }
  const t = await startApp('sqlite', { ALLOW_PRIVATE_URLS: '1' });
  const key = await t.newKey();
  const files = await serveFiles(paths);
  const save = (pdf: Buffer): string => {
    const file = path.join(tmp, `out-${Math.random().toString(36).slice(2)}.pdf`);
    writeFileSync(file, pdf);
    return file;
  };
  return {
    t,
    key,
    files,
    tmp,
    edit: (file, edits, options, headers = {}) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/edit',
        headers: { ...bearer(key), ...headers },
        payload: { source: { url: files.url(file) }, edits, ...(options ? { options } : {}) },
      }),
    async download(url) {
      const res = await t.app.inject({ method: 'GET', url: url.replace(t.env.config.publicBaseUrl, '') });
      expect(res.statusCode).toBe(200);
      return res.rawPayload;
    },
    save,
    textOf: (pdf) => pdftotext(save(pdf)),
    async close() {
      rmSync(tmp, { recursive: true, force: true });
      await files.close();
      await t.close();
    },
  };
}

import { startApp, type TestApp } from './app.js';
import { corpus, corpusPath } from './corpus.js';
import { type FileServer, serveFiles } from './serve.js';

export interface CorpusApp {
  t: TestApp;
  key: string;
  /** Every corpus file, served on loopback for `source.url`. */
  files: FileServer;
}

/** The whole service (SQLite, private URLs allowed) with a key and the corpus served beside it. */
export async function startCorpusApp(): Promise<CorpusApp> {
  const t = await startApp('sqlite', { ALLOW_PRIVATE_URLS: '1' });
  const key = await t.newKey();
  const files = await serveFiles(Object.fromEntries(corpus().map((e) => [e.file, corpusPath(e.file)])));
  return { t, key, files };
}

import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FileServer {
  /** URL under which `bytes` (or a corpus file) is served. */
  url(name: string): string;
  put(name: string, bytes: Buffer): void;
  close(): Promise<void>;
}

/** A loopback HTTP server handing out registered byte strings, for `source.url` tests. */
export async function serveFiles(files: Record<string, string> = {}): Promise<FileServer> {
  const store = new Map<string, Buffer>();
  for (const [name, file] of Object.entries(files)) store.set(name, readFileSync(file));
  const server: Server = createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '/').slice(1));
    const body = store.get(name);
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (name) => `http://127.0.0.1:${port}/${encodeURIComponent(name)}`,
    put: (name, bytes) => {
      store.set(name, bytes);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { bearer } from './app.js';

/** Polls GET /v1/jobs/{id} until the job has finished; returns its body. */
export async function waitForJob(
  app: FastifyInstance,
  key: string,
  jobId: string,
  timeoutMs = 120_000,
): Promise<Record<string, unknown> & { status: string }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await app.inject({ method: 'GET', url: `/v1/jobs/${jobId}`, headers: bearer(key) });
    if (res.statusCode !== 200) throw new Error(`GET job ${jobId}: ${res.statusCode} ${res.body}`);
    const body = res.json();
    if (['done', 'partial', 'failed'].includes(body.status)) return body;
    if (Date.now() > until) throw new Error(`job ${jobId} still ${body.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Downloads a signed output link through the app, as a client would. */
export async function download(app: FastifyInstance, publicBaseUrl: string, url: string): Promise<Buffer> {
  const res = await app.inject({ method: 'GET', url: url.replace(publicBaseUrl, '') });
  if (res.statusCode !== 200) throw new Error(`download ${url}: ${res.statusCode}`);
  return res.rawPayload;
}

/** The text of PDFs via pdftotext, whitespace collapsed (one temp folder, removed after). */
export function pdfTexts(pdfs: Buffer[]): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'pdfedit-jobs-'));
  try {
    return pdfs.map((pdf, i) => {
      const file = path.join(dir, `${i}.pdf`);
      writeFileSync(file, pdf);
      return execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' }).replace(/\s+/g, ' ');
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A CSV of `n` records with quoting that a naive split would break. */
export function namesCsv(n: number): { csv: string; names: string[] } {
  const names = Array.from({ length: n }, (_, i) => `Client ${i}`);
  const rows = names.map((name, i) => `"${name}","note, with comma ""${i}"""`);
  return { csv: `\uFEFFname,note\r\n${rows.join('\r\n')}\r\n`, names };
}

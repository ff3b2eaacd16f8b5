import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import { corpusPath, pdftotextAvailable } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import { download, pdfTexts, waitForJob } from '../helpers/jobs.js';
import { HAVE_MOTO, type Moto, startMoto } from '../helpers/moto.js';
import { dropPrefix, REDIS_URL, uniquePrefix } from '../helpers/redis.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';

/**
 * Issue 6's two deployments end to end through the whole service: the embedded one
 * (SQLite, local disk, in-process queue) and the scale-out one (PostgreSQL, S3 on moto,
 * BullMQ and rate-limit counters on Redis). Upload, synchronous edit, asynchronous job,
 * outputs downloaded through their signed links, and another account kept out.
 */
const DEPLOYMENTS = [
  { name: 'SQLite + disk + in-process queue', scaleOut: false },
  ...(HAVE_MOTO ? [{ name: 'PostgreSQL + S3 + Redis', scaleOut: true }] : []),
];

describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable()).each(DEPLOYMENTS)('edits on $name', ({ scaleOut }) => {
  let t: TestApp;
  let moto: Moto | undefined;
  const prefix = uniquePrefix();
  let key: string;
  let other: string;

  beforeAll(async () => {
    let env: Record<string, string> = {};
    if (scaleOut) {
      moto = await startMoto();
      env = {
        ...(await moto.env()),
        REDIS_URL,
        QUEUE_PREFIX: prefix,
        RATE_LIMIT_PREFIX: `pdfedit-test:${randomBytes(6).toString('hex')}:`,
      };
    }
    t = await startApp(scaleOut ? 'postgres' : 'sqlite', env);
    // The parts really are the ones named.
    expect(t.app.blobs.constructor.name).toBe(scaleOut ? 'S3BlobStore' : 'DiskBlobStore');
    expect(t.app.jobs.queue.constructor.name).toBe(scaleOut ? 'BullQueue' : 'EmbeddedQueue');
    key = await t.newKey('deploy@example.com', 'starter');
    other = await t.newKey('intruder@example.com', 'starter');
  });
  afterAll(async () => {
    await t?.close();
    await moto?.stop();
    if (scaleOut) await dropPrefix(prefix);
  });

  /** POST /v1/files, then PUT the bytes to the signed link, as a client does. */
  async function upload(bytes: Buffer): Promise<string> {
    const res = await t.app.inject({ method: 'POST', url: '/v1/files', headers: bearer(key) });
    expect(res.statusCode, res.body).toBe(200);
    const r = res.json() as { file_id: string; upload_url: string; headers: Record<string, string> };
    const put = await t.app.inject({
      method: 'PUT',
      url: r.upload_url.replace(t.env.config.publicBaseUrl, ''),
      headers: r.headers,
      payload: bytes,
    });
    expect(put.statusCode, put.body).toBe(204);
    return r.file_id;
  }

  it('edits an uploaded file synchronously and as a job; outputs download; others get 404', async () => {
    const fileId = await upload(readFileSync(corpusPath(INVOICE)));
    const edit = (options?: Record<string, unknown>) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/edit',
        headers: bearer(key),
        payload: {
          source: { file_id: fileId },
          edits: [{ find: 'INV-0046', replace: 'INV-0064' }],
          ...(options ? { options } : {}),
        },
      });

    const sync = await edit();
    expect(sync.statusCode, sync.body).toBe(200);
    expect(sync.json()).toMatchObject({ status: 'done', usage: { pages_billed: 1 } });
    const queued = await edit({ async: true });
    expect(queued.statusCode, queued.body).toBe(202);
    const job = await waitForJob(t.app, key, queued.json().job_id);
    expect(job.status).toBe('done');

    const outputs = [sync.json().output.url as string, (job.output as { url: string }).url];
    const texts = pdfTexts(
      await Promise.all(outputs.map((u) => download(t.app, t.env.config.publicBaseUrl, u))),
    );
    for (const text of texts) {
      expect(text).toContain('INV-0064');
      expect(text).not.toContain('INV-0046');
    }

    // Another account sees neither the upload nor the job.
    const foreignEdit = await t.app.inject({
      method: 'POST',
      url: '/v1/edit',
      headers: bearer(other),
      payload: { source: { file_id: fileId }, edits: [{ find: 'INV-0046', replace: 'INV-0064' }] },
    });
    expect(foreignEdit.statusCode).toBe(404);
    const foreignJob = await t.app.inject({
      method: 'GET',
      url: `/v1/jobs/${queued.json().job_id}`,
      headers: bearer(other),
    });
    expect(foreignJob.statusCode).toBe(404);
    const foreignDelete = await t.app.inject({
      method: 'DELETE',
      url: `/v1/files/${sync.json().output.file_id}`,
      headers: bearer(other),
    });
    expect(foreignDelete.statusCode).toBe(404);

    // The owner deletes the upload: its outputs and previews go with it.
    const del = await t.app.inject({ method: 'DELETE', url: `/v1/files/${fileId}`, headers: bearer(key) });
    expect(del.statusCode).toBe(204);
    const gone = await t.app.inject({
      method: 'GET',
      url: outputs[0]!.replace(t.env.config.publicBaseUrl, ''),
    });
    expect(gone.statusCode).toBe(404);
  });
});

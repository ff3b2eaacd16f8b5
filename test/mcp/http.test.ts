import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/app.js';
import { corpusPath, pngSize } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import { type FileServer, serveFiles } from '../helpers/serve.js';
import { call, checkToolList, toolErrorOf, verdicts } from './common.js';
import { type LiveApp, startLiveApp } from './live.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';

function connect(live: LiveApp, key: string | undefined): Promise<Client> {
  const client = new Client({ name: 'pdfedit-http-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${live.baseUrl}/mcp`), {
    requestInit: { headers: key ? bearer(key) : {} },
  });
  return client.connect(transport).then(() => client);
}

describe.skipIf(!HAVE_CORPUS)('MCP over streamable HTTP at /mcp', () => {
  let live: LiveApp;
  let files: FileServer;
  let client: Client;

  beforeAll(async () => {
    live = await startLiveApp();
    files = await serveFiles({ [INVOICE]: corpusPath(INVOICE) });
    client = await connect(live, live.key);
  });
  afterAll(async () => {
    await client?.close();
    await files?.close();
    await live?.close();
  });

  it('lists the five tools (no local files over HTTP)', async () => {
    await checkToolList(client, false);
  });

  it('find → preview → edit → job by URL and file_id, verdicts equal to the API', async () => {
    const found = await call(client, 'pdf_find', {
      document: { url: files.url(INVOICE) },
      query: 'Bayside Wholesale',
    });
    expect(found.isError, JSON.stringify(found.content)).toBeFalsy();
    const hit = (found.structuredContent!.hits as { page: number; box: number[] }[])[0]!;
    expect(hit.page).toBe(1);

    const preview = await call(client, 'pdf_preview', {
      document: { url: files.url(INVOICE) },
      page: 1,
      region: hit.box.map((n, i) => (i < 2 ? n - 20 : n + 20)),
    });
    expect(preview.isError, JSON.stringify(preview.content)).toBeFalsy();
    const img = (preview.content as { type: string; data?: string }[]).find((c) => c.type === 'image')!;
    expect(pngSize(Buffer.from(img.data!, 'base64')).width).toBeGreaterThan(0);

    const edits = [{ find: 'Bayside Wholesale', replace: 'Seaside Wholesale' }];
    const edited = await call(client, 'pdf_edit', { document: { url: files.url(INVOICE) }, edits });
    expect(edited.isError, JSON.stringify(edited.content)).toBeFalsy();
    const r = edited.structuredContent!;
    // The same edit straight through the API on the output's own file: a different request.
    const direct = await live.t.app.inject({
      method: 'POST',
      url: '/v1/edit',
      headers: bearer(live.key),
      payload: { source: { url: files.url(INVOICE) }, edits, options: { async: false } },
    });
    expect(direct.statusCode).toBe(200);
    expect(r.status).toBe(direct.json().status);
    expect(verdicts(r.changes as never)).toEqual(verdicts(direct.json().changes));

    // The output's file_id is a document for the next call: the new text is there.
    const fileId = (r.output as { file_id: string }).file_id;
    const again = await call(client, 'pdf_find', {
      document: { file_id: fileId },
      query: 'Seaside Wholesale',
    });
    expect(again.structuredContent!.hit_count).toBeGreaterThanOrEqual(1);

    const ba = await call(client, 'pdf_preview', { change: (r.changes as object[])[0] });
    expect(ba.isError, JSON.stringify(ba.content)).toBeFalsy();
    expect((ba.content as { type: string }[]).filter((c) => c.type === 'image')).toHaveLength(2);

    const queued = await call(client, 'pdf_edit', {
      document: { file_id: fileId },
      edits: [{ find: 'Seaside', replace: 'Bayside' }],
      options: { async: true },
    });
    const job = await call(client, 'pdf_job', { job_id: queued.structuredContent!.job_id, wait_seconds: 60 });
    expect(job.structuredContent).toMatchObject({ finished: true, status: 'done', kind: 'edit' });
    expect((job.structuredContent!.changes as { verified: boolean }[])[0]!.verified).toBe(true);
  });

  it('pdf_edit with dry_run says what would change, with no output and nothing billed', async () => {
    const edits = [{ find: 'Amount Due', replace: 'Amount Owed' }];
    const dry = await call(client, 'pdf_edit', {
      document: { url: files.url(INVOICE) },
      edits,
      options: { dry_run: true },
    });
    expect(dry.isError, JSON.stringify(dry.content)).toBeFalsy();
    const r = dry.structuredContent!;
    expect(r).toMatchObject({ dry_run: true, output: null, usage: { pages_billed: 0 } });
    expect((r.changes as { verified: boolean }[]).every((c) => c.verified)).toBe(true);
    const text = (dry.content as { type: string; text?: string }[]).find((c) => c.type === 'text')!.text!;
    expect(text).toContain('dry run: nothing was saved or billed');
  });

  it('refuses local paths and foreign links over HTTP; API errors carry code and hint', async () => {
    const bad = await call(client, 'pdf_find', { document: { path: '/etc/passwd' }, query: 'root' });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toMatch(/Input validation error/);
    const foreign = toolErrorOf(
      await call(client, 'pdf_preview', { change: { after_preview_url: 'http://169.254.169.254/latest' } }),
    );
    expect(foreign.code).toBe('invalid_request');
    const route = toolErrorOf(
      await call(client, 'pdf_preview', {
        change: { before_preview_url: `${live.baseUrl}/v1/webhook-secret` },
      }),
    );
    expect(route.message).toMatch(/not a file link of this service/);
    const missing = toolErrorOf(await call(client, 'pdf_job', { job_id: 'job_nope' }));
    expect(missing.code).toBe('not_found');
  });

  it('needs a valid Bearer key (401 envelope); is rate-limited and metered like the API; GET answers 405', async () => {
    await expect(connect(live, undefined)).rejects.toThrow(/401|unauthorized/i);
    await expect(connect(live, 'sk_live_000000000000000000000000')).rejects.toThrow(/401|unauthorized/i);
    const raw = await fetch(`${live.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(raw.status).toBe(401);
    expect((await raw.json()).error.code).toBe('unauthorized');

    const ok = await fetch(`${live.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        ...bearer(live.key),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-ratelimit-limit')).toBeTruthy();
    expect(ok.headers.get('x-request-id')).toMatch(/^req_/);
    expect((await ok.json()).result.tools).toHaveLength(5);

    const usage = await live.t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(live.key) });
    expect(usage.json().pages_used).toBeGreaterThan(0);

    const get = await fetch(`${live.baseUrl}/mcp`, { headers: bearer(live.key) });
    expect(get.status).toBe(405);
  });
});

import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/app.js';
import { corpusPath, pngSize } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import { waitForJob } from '../helpers/jobs.js';
import { type FileServer, serveFiles } from '../helpers/serve.js';
import { call, checkToolList, type ToolResult, toolErrorOf, verdicts } from './common.js';
import { CLI_ARGS, type LiveApp, startLiveApp } from './live.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';
const LOREM = 'font-tt-subset-libreoffice-trivial.pdf';

describe.skipIf(!HAVE_CORPUS)('MCP over stdio (pdfedit mcp) against a running service', () => {
  let live: LiveApp;
  let files: FileServer;
  let dir: string;
  let client: Client;

  beforeAll(async () => {
    live = await startLiveApp();
    files = await serveFiles({ [INVOICE]: corpusPath(INVOICE), [LOREM]: corpusPath(LOREM) });
    dir = mkdtempSync(path.join(tmpdir(), 'pdfedit-mcp-'));
    mkdirSync(path.join(dir, 'work'));
    copyFileSync(corpusPath(INVOICE), path.join(dir, 'work', 'invoice.pdf'));
    copyFileSync(corpusPath(LOREM), path.join(dir, 'outside.pdf'));
    copyFileSync(
      corpusPath('form-libreoffice-writer-needappearances.pdf'),
      path.join(dir, 'work', 'form.pdf'),
    );
    symlinkSync(path.join(dir, 'outside.pdf'), path.join(dir, 'work', 'link.pdf'));
    client = new Client({ name: 'pdfedit-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [...CLI_ARGS, 'mcp', '--allow-dir', path.join(dir, 'work')],
        env: {
          PATH: process.env.PATH ?? '',
          HOME: dir,
          PDFEDIT_API_KEY: live.key,
          PDFEDIT_BASE_URL: live.baseUrl,
        },
        stderr: 'pipe',
      }),
    );
  });
  afterAll(async () => {
    await client?.close();
    await files?.close();
    await live?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lists the five tools with complete schemas and annotations', async () => {
    await checkToolList(client, true);
  });

  it('find → preview → edit → job on a local corpus file, verdicts equal to the API', async () => {
    const found = await call(client, 'pdf_find', {
      document: { path: 'invoice.pdf' },
      query: 'amount due',
      match: 'icase',
    });
    expect(found.isError).toBeFalsy();
    const f = found.structuredContent!;
    expect(f.hit_count).toBeGreaterThanOrEqual(1);
    const hit = (f.hits as { page: number; text: string; box: number[]; spans: { span_id: string }[] }[])[0]!;
    expect(hit.page).toBe(1);
    expect(hit.text.toLowerCase()).toBe('amount due');
    expect(hit.spans[0]!.span_id).toBeTruthy();

    const preview = await call(client, 'pdf_preview', {
      document: { path: 'invoice.pdf' },
      page: hit.page,
      highlights: [hit.box],
      width: 600,
      output_path: 'previews/page1.png',
    });
    expect(preview.isError).toBeFalsy();
    const image = (preview.content as { type: string; data?: string; mimeType?: string }[]).find(
      (c) => c.type === 'image',
    );
    expect(image?.mimeType).toBe('image/png');
    expect(pngSize(Buffer.from(image!.data!, 'base64')).width).toBe(600);
    expect(pngSize(readFileSync(path.join(dir, 'work/previews/page1.png'))).width).toBe(600);

    const edits = [{ find: 'Amount Due', replace: 'Amount Owed' }];
    const edited = await call(client, 'pdf_edit', {
      document: { path: 'invoice.pdf' },
      edits,
      output_path: 'out/invoice-owed.pdf',
    });
    expect(edited.isError, JSON.stringify(edited.content)).toBeFalsy();
    const r = edited.structuredContent!;
    expect(r.status).toBe('done');
    expect(readFileSync(path.join(dir, 'work/out/invoice-owed.pdf')).subarray(0, 5).toString()).toBe('%PDF-');
    expect(r.saved_to).toBe(path.join(dir, 'work/out/invoice-owed.pdf'));
    const summary = (edited.content as { text?: string }[])[0]!.text!;
    expect(summary).toMatch(/status done: 1 change/);

    // The same call again is the same API request (the file is uploaded once): no second charge.
    const usage = async () =>
      (await live.t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(live.key) })).json()
        .pages_used;
    const used = await usage();
    const repeat = await call(client, 'pdf_edit', { document: { path: 'invoice.pdf' }, edits });
    expect(repeat.structuredContent!.output).toEqual(r.output);
    expect(await usage()).toBe(used);

    // The same edit straight through the API (on the same bytes, by URL): the same verdicts.
    const direct = await live.t.app.inject({
      method: 'POST',
      url: '/v1/edit',
      headers: bearer(live.key),
      payload: { source: { url: files.url(INVOICE) }, edits },
    });
    expect(direct.statusCode).toBe(200);
    expect(r.status).toBe(direct.json().status);
    expect(verdicts(r.changes as never)).toEqual(verdicts(direct.json().changes));

    // The before/after of the change.
    const change = (r.changes as Record<string, unknown>[])[0]!;
    const ba = await call(client, 'pdf_preview', { change, output_path: 'previews/change.png' });
    expect(ba.isError, JSON.stringify(ba.content)).toBeFalsy();
    expect((ba.structuredContent!.images as { label: string }[]).map((i) => i.label)).toEqual([
      'before',
      'after',
    ]);
    expect(existsSync(path.join(dir, 'work/previews/change-before.png'))).toBe(true);
    expect(existsSync(path.join(dir, 'work/previews/change-after.png'))).toBe(true);

    // As a job: the result pdf_job waits for equals the synchronous one.
    const queued = await call(client, 'pdf_edit', {
      document: { url: files.url(INVOICE) },
      edits,
      options: { async: true },
    });
    expect(queued.structuredContent).toMatchObject({ status: 'queued' });
    const jobId = queued.structuredContent!.job_id as string;
    const job = await call(client, 'pdf_job', {
      job_id: jobId,
      wait_seconds: 60,
      output_path: 'out/job.pdf',
    });
    expect(job.isError, JSON.stringify(job.content)).toBeFalsy();
    const j = job.structuredContent!;
    expect(j).toMatchObject({ job_id: jobId, finished: true, status: 'done', kind: 'edit' });
    expect(verdicts(j.changes as never)).toEqual(verdicts(direct.json().changes));
    expect((j.saved_to as string[])[0]).toBe(path.join(dir, 'work/out/job.pdf'));
    const api = await waitForJob(live.t.app, live.key, jobId);
    expect(api.status).toBe(j.status);
  });

  it('runs a batch from CSV text and saves one output per record', async () => {
    const batch = await call(client, 'pdf_batch', {
      template: { path: 'invoice.pdf' },
      edits: [{ find: 'Bayside Wholesale', replace: '{name} Wholesale' }],
      csv: 'name\r\nAda\r\n"Grace, H."\r\nEmmy\r\n',
    });
    expect(batch.isError, JSON.stringify(batch.content)).toBeFalsy();
    expect(batch.structuredContent).toMatchObject({ status: 'queued', records: 3 });
    const progress: { progress: number; total?: number }[] = [];
    const job = (await client.callTool(
      {
        name: 'pdf_job',
        arguments: { job_id: batch.structuredContent!.job_id, wait_seconds: 90, output_dir: 'letters' },
      },
      undefined,
      { onprogress: (p) => progress.push(p) },
    )) as ToolResult;
    // Progress notifications while waiting, the last one the finished job.
    expect(progress.at(-1)).toMatchObject({ progress: 3, total: 3 });
    expect(job.structuredContent).toMatchObject({ finished: true, status: 'done', kind: 'batch' });
    expect(job.structuredContent!.saved_to).toHaveLength(3);
    for (const n of ['0001', '0002', '0003'])
      expect(existsSync(path.join(dir, `work/letters/record-${n}.pdf`))).toBe(true);
  });

  it('refuses paths outside the allowed folder (also through a symlink), reading and writing', async () => {
    for (const p of ['../outside.pdf', path.join(dir, 'outside.pdf'), 'link.pdf', '/etc/passwd']) {
      const e = toolErrorOf(await call(client, 'pdf_find', { document: { path: p }, query: 'x' }));
      expect(e.code).toBe('invalid_request');
      expect(e.message).toMatch(/outside the allowed folder|No such file/);
    }
    const e = toolErrorOf(
      await call(client, 'pdf_edit', {
        document: { path: 'invoice.pdf' },
        edits: [{ find: 'Amount Due', replace: 'X' }],
        output_path: '../escaped.pdf',
      }),
    );
    expect(e.message).toMatch(/outside the allowed folder/);
    expect(existsSync(path.join(dir, 'escaped.pdf'))).toBe(false);
  });

  it('answers bad input as tool errors: unknown tool, schema-invalid arguments, API errors with code and hint', async () => {
    const unknown = await call(client, 'pdf_frobnicate', {});
    expect(unknown.isError).toBe(true);
    expect(JSON.stringify(unknown.content)).toMatch(/pdf_frobnicate not found/);

    for (const args of [
      { document: { path: 'invoice.pdf' }, edits: [] },
      { document: { path: 'invoice.pdf' }, edits: [{ find: 'a', match: 'fuzzy' }] },
      { document: { path: 'invoice.pdf' }, edits: [{ find: 'a', colour: 'red' }] },
      { edits: [{ find: 'a' }] },
      { document: { path: 'invoice.pdf' }, edits: [{ find: 'a', replace: 'b' }], dry_run: true },
    ]) {
      const bad = await call(client, 'pdf_edit', args);
      expect(bad.isError, JSON.stringify(args)).toBe(true);
      expect(JSON.stringify(bad.content)).toMatch(/Input validation error/);
    }

    const two = toolErrorOf(
      await call(client, 'pdf_find', {
        document: { path: 'invoice.pdf', url: files.url(INVOICE) },
        query: 'x',
      }),
    );
    expect(two.message).toMatch(/exactly one of url, file_id or path/);

    const missing = toolErrorOf(
      await call(client, 'pdf_find', { document: { file_id: 'file_doesnotexist' }, query: 'x' }),
    );
    expect(missing.code).toBe('not_found');
    expect(missing.hint.length).toBeGreaterThan(10);

    // Every edit rolled back: edit_failed, and the tool error carries failed[] with the reason.
    const failedRes = await call(client, 'pdf_edit', {
      document: { path: 'form.pdf' },
      edits: [{ op: 'form', fields: { Nope: 'x' } }],
    });
    const failed = toolErrorOf(failedRes);
    expect(failed.code).toBe('edit_failed');
    expect(failed.hint).toMatch(/failed\[\]/);
    const meta = (failedRes._meta as Record<string, { failed: { reason: string; field: string }[] }>)[
      'pdfedit/error'
    ]!;
    expect(meta.failed[0]).toMatchObject({ reason: 'field_not_found', field: 'Nope' });

    const regex = toolErrorOf(
      await call(client, 'pdf_find', { document: { path: 'invoice.pdf' }, query: '(', match: 'regex' }),
    );
    expect(regex.code).toBe('invalid_request');
  });
});

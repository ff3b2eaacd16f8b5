import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FilesSchema } from '../../src/store/files-schema.js';
import { bearer } from '../helpers/app.js';
import { corpusPath, pdftotextAvailable } from '../helpers/corpus.js';
import { type EditApp, startEditApp } from '../helpers/edit-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';

describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable())('POST /v1/edit with options.dry_run', () => {
  let a: EditApp;
  beforeAll(async () => {
    a = await startEditApp({ [INVOICE]: corpusPath(INVOICE) }, 'dry-run');
  });
  afterAll(async () => {
    await a?.close();
  });

  const usedPages = async () => {
    const res = await a.t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(a.key) });
    expect(res.statusCode).toBe(200);
    return res.json().pages_used as number;
  };
  const storedFiles = async () => {
    const row = await a.t.app.db
      .withTables<FilesSchema>()
      .selectFrom('files')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };

  it('plans and verifies the edit, saves nothing, bills nothing, and predicts the real edit', async () => {
    const edits = [
      { find: 'Bayside Wholesale', replace: 'Baysider Wholesale' },
      { find: 'No such phrase', replace: 'x' },
    ];
    const pagesBefore = await usedPages();
    const filesBefore = await storedFiles();
    const dry = await a.edit(INVOICE, edits, { dry_run: true });
    expect(dry.statusCode, dry.body).toBe(200);
    const plan = dry.json();
    expect(plan.dry_run).toBe(true);
    expect(plan.status).toBe('partial');
    expect(plan.output).toBeNull();
    expect(plan.usage.pages_billed).toBe(0);
    expect(plan.unmatched).toEqual([{ index: 1, op: 'replace', find: 'No such phrase' }]);
    expect(plan.flags.map((f: { kind: string }) => f.kind)).toContain('invoice');
    expect(plan.changes.length).toBeGreaterThanOrEqual(1);
    for (const c of plan.changes) {
      expect(c).toMatchObject({ op: 'replace', find: 'Bayside Wholesale', verified: true, page: 1 });
      expect(c.before_preview_url).toBeNull();
      expect(c.after_preview_url).toBeNull();
      expect(c.box).toHaveLength(4);
    }
    expect(await usedPages()).toBe(pagesBefore);
    expect(await storedFiles()).toBe(filesBefore);

    // The real edit does what the dry run said, and is billed.
    const real = await a.edit(INVOICE, edits);
    expect(real.statusCode, real.body).toBe(200);
    const done = real.json();
    expect(done.dry_run).toBeUndefined();
    expect(done.usage.pages_billed).toBe(1);
    expect(done.output).not.toBeNull();
    const verdict = (c: Record<string, unknown>) => [c.page, c.font_source, c.font_used, c.verified, c.box];
    expect(done.changes.map(verdict)).toEqual(plan.changes.map(verdict));
    expect(done.warnings).toEqual(plan.warnings);
    expect(await usedPages()).toBe(pagesBefore + 1);
    const text = a.textOf(await a.download(done.output.url));
    expect(text).toContain('Baysider Wholesale');
  });

  it('answers JSON even when the PDF itself is asked for', async () => {
    const res = await a.edit(
      INVOICE,
      [{ find: 'INV-0046', replace: 'INV-0064' }],
      { dry_run: true },
      {
        accept: 'application/pdf',
      },
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.json()).toMatchObject({ dry_run: true, output: null, usage: { pages_billed: 0 } });
  });

  it('refuses dry_run with async, with webhook_url, and in a batch', async () => {
    for (const options of [
      { dry_run: true, async: true },
      { dry_run: true, webhook_url: 'https://example.com/hook' },
    ]) {
      const res = await a.edit(INVOICE, [{ find: 'INV-0046', replace: 'INV-0064' }], options);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalid_request' });
      expect(res.json().error.message).toContain('dry_run');
    }
    const batch = await a.t.app.inject({
      method: 'POST',
      url: '/v1/batch',
      headers: bearer(a.key),
      payload: {
        template: { url: a.files.url(INVOICE) },
        edits: [{ find: 'Bayside Wholesale', replace: '{name}' }],
        records: [{ name: 'Northwind' }],
        options: { dry_run: true },
      },
    });
    expect(batch.statusCode, batch.body).toBe(400);
    expect(batch.json().error).toMatchObject({ code: 'invalid_request' });
    expect(batch.json().error.message).toContain('dry_run');
  });
});

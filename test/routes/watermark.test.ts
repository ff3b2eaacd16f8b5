import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountPlan } from '../../src/billing/plans.js';
import { TERMS_VERSION } from '../../src/domain/terms.js';
import type { KeyMode } from '../../src/kernel/principal.js';
import { bearer, startApp } from '../helpers/app.js';
import { corpusPath, pdftotext, pdftotextAvailable } from '../helpers/corpus.js';
import { DB_KINDS, type DbKind, HAVE_CORPUS } from '../helpers/env.js';
import { waitForJob } from '../helpers/jobs.js';
import { serveFiles } from '../helpers/serve.js';

/** Flagged by the engine (an invoice title with a totals line). */
const INVOICE = 'doc-invoice-itextsharp-demo.pdf';
/** Ordinary: a plain LibreOffice paragraph. */
const TRIVIAL = 'font-tt-subset-libreoffice-trivial.pdf';
const EDITS: Record<string, unknown[]> = {
  [INVOICE]: [{ find: 'INV-0046', replace: 'INV-0064' }],
  [TRIVIAL]: [{ op: 'delete', find: 'dolor ' }],
};

type Caller = 'keyless' | KeyMode;
type Terms = 'none' | 'current' | 'old';
type Watermark = 'auto' | 'on' | 'off' | undefined;

interface Row {
  caller: Caller;
  plan: AccountPlan | null;
  terms: Terms;
  doc: string;
  watermark: Watermark;
}

/** Rule 12 as the test reads it: the answer and the marks every row must get. */
function expected(row: Row): { status: number; edited: boolean; sample: boolean } {
  const flagged = row.doc === INVOICE;
  const offAllowed =
    row.caller !== 'keyless' && (row.plan === 'growth' || row.plan === 'scale') && row.terms === 'current';
  if (flagged && row.watermark === 'off' && !offAllowed) return { status: 403, edited: false, sample: false };
  return {
    status: 200,
    edited: row.watermark === 'on' || (flagged && row.watermark !== 'off'),
    sample: row.caller !== 'live',
  };
}

/** plan × terms × flagged × auto|on|off (and absent) × keyless/test/live. */
function table(): Row[] {
  const rows: Row[] = [];
  const marks: Watermark[] = ['auto', 'on', 'off', undefined];
  for (const doc of [INVOICE, TRIVIAL]) {
    for (const watermark of marks) {
      rows.push({ caller: 'keyless', plan: null, terms: 'none', doc, watermark });
      for (const caller of ['test', 'live'] as const) {
        for (const plan of ['free', 'starter', 'growth', 'scale'] as const) {
          const terms: Terms[] = plan === 'growth' ? ['none', 'current', 'old'] : ['none', 'current'];
          for (const t of terms) rows.push({ caller, plan, terms: t, doc, watermark });
        }
      }
    }
  }
  return rows;
}

function name(row: Row): string {
  const who = row.caller === 'keyless' ? 'keyless' : `${row.caller} ${row.plan} terms=${row.terms}`;
  return `${who}, ${row.doc === INVOICE ? 'flagged' : 'ordinary'}, watermark=${row.watermark ?? '(absent)'}`;
}

async function setUp(kind: DbKind) {
  const t = await startApp(kind, { ALLOW_PRIVATE_URLS: '1' });
  const files = await serveFiles({ [INVOICE]: corpusPath(INVOICE), [TRIVIAL]: corpusPath(TRIVIAL) });
  const keys = new Map<string, string>();
  /** One account per plan and terms state; a key per mode. */
  async function keyFor(row: Row): Promise<string | undefined> {
    if (row.caller === 'keyless' || row.plan === null) return undefined;
    const id = `${row.caller}-${row.plan}-${row.terms}`;
    const known = keys.get(id);
    if (known) return known;
    const email = `${row.plan}-${row.terms}@example.com`;
    const key = await t.newKey(email, row.plan, row.caller);
    if (row.terms !== 'none') {
      await t.app.db
        .updateTable('accounts')
        .set({
          terms_accepted_at: Date.now(),
          terms_version: row.terms === 'current' ? TERMS_VERSION : '2020-01-01',
        })
        .where('email', '=', email)
        .execute();
    }
    keys.set(id, key);
    return key;
  }
  let ip = 0;
  async function edit(row: Row, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
    const key = await keyFor(row);
    ip += 1;
    return t.app.inject({
      method: 'POST',
      url: '/v1/edit',
      // Keyless use is counted per address group: each row from an address of its own.
      remoteAddress: `10.${Math.floor(ip / 250)}.${ip % 250}.1`,
      headers: { ...(key ? bearer(key) : {}), ...headers },
      payload: {
        source: { url: files.url(row.doc) },
        edits: EDITS[row.doc],
        // Without a watermark (and no extra option) there is no options object at all.
        ...(row.watermark || Object.keys(extra).length > 0
          ? { options: { ...(row.watermark ? { watermark: row.watermark } : {}), ...extra } }
          : {}),
      },
    });
  }
  async function download(url: string): Promise<Buffer> {
    const res = await t.app.inject({ method: 'GET', url: url.replace(t.env.config.publicBaseUrl, '') });
    expect(res.statusCode).toBe(200);
    return res.rawPayload;
  }
  return {
    t,
    keyFor,
    edit,
    download,
    urlOf: (file: string) => files.url(file),
    async close() {
      await files.close();
      await t.close();
    },
  };
}

/**
 * SPEC rule 12 at the HTTP level: every branch of plan × accepted terms × flagged ×
 * watermark auto|on|off × keyless/test/live key, with the output's text checked for the
 * marks (pdftotext) and the result's flags and warnings.
 */
describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable())("options.watermark and the 'Edited' mark", () => {
  let s: Awaited<ReturnType<typeof setUp>>;
  let tmp: string;
  beforeAll(async () => {
    s = await setUp('sqlite');
    tmp = mkdtempSync(path.join(tmpdir(), 'pdfedit-watermark-'));
  });
  afterAll(async () => {
    rmSync(tmp, { recursive: true, force: true });
    await s?.close();
  });

  const textOf = (pdf: Buffer) => {
    const file = path.join(tmp, `out-${Math.random().toString(36).slice(2)}.pdf`);
    writeFileSync(file, pdf);
    return pdftotext(file);
  };

  it.each(table().map((r) => [name(r), r] as const))('%s', async (_name, row) => {
    const want = expected(row);
    const res = await s.edit(row);
    expect(res.statusCode, res.body).toBe(want.status);
    const body = res.json();
    if (want.status === 403) {
      expect(body.error.code).toBe('forbidden_watermark_off');
      return;
    }
    expect(body.status).toBe('done');
    if (row.doc === INVOICE) {
      expect(body.flags.map((f: { kind: string }) => f.kind)).toEqual(['invoice']);
      expect(body.flags[0].evidence).toMatch(/page 1/);
    } else {
      expect(body.flags).toEqual([]);
    }
    expect(body.warnings.includes('edited_mark')).toBe(want.edited);
    expect(body.warnings.includes('edited_mark_overlaps')).toBe(false);
    expect(body.warnings.includes('sample_mark')).toBe(want.sample);
    const text = textOf(await s.download(body.output.url));
    expect(text.includes('Edited')).toBe(want.edited);
    expect(text.includes('SAMPLE')).toBe(want.sample);
  });

  it('runs the same rules in a job: refused off is the job error, auto marks the output', async () => {
    const refusedRow: Row = {
      caller: 'live',
      plan: 'starter',
      terms: 'current',
      doc: INVOICE,
      watermark: 'off',
    };
    const key = (await s.keyFor(refusedRow)) ?? '';
    const refused = await s.edit(refusedRow, {}, { async: true });
    expect(refused.statusCode, refused.body).toBe(202);
    const failed = await waitForJob(s.t.app, key, refused.json().job_id);
    expect(failed.status).toBe('failed');
    expect((failed.error as { code: string }).code).toBe('forbidden_watermark_off');
    const auto = await s.edit({ ...refusedRow, watermark: 'auto' }, {}, { async: true });
    expect(auto.statusCode, auto.body).toBe(202);
    const done = await waitForJob(s.t.app, key, auto.json().job_id);
    expect(done.status).toBe('done');
    expect(done.warnings).toContain('edited_mark');
    expect(done.flags).toEqual([expect.objectContaining({ kind: 'invoice' })]);
    expect(textOf(await s.download((done.output as { url: string }).url))).toContain('Edited');
  });

  it('never marks a redaction, even with watermark on', async () => {
    const key = await s.t.newKey('redactor@example.com', 'free', 'live');
    for (const watermark of ['auto', 'on']) {
      const res = await s.t.app.inject({
        method: 'POST',
        url: '/v1/edit',
        headers: bearer(key),
        payload: {
          source: { url: s.urlOf(INVOICE) },
          edits: [{ op: 'redact', find: 'INV-0046' }],
          options: { watermark },
        },
      });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.flags.length).toBe(1);
      expect(body.warnings).not.toContain('edited_mark');
      expect(textOf(await s.download(body.output.url))).not.toContain('Edited');
    }
  });
});

/** The account row decides on every store: the rule's two sides of `off` on PostgreSQL too. */
describe.skipIf(!HAVE_CORPUS).each(DB_KINDS)('watermark off and the account row (%s)', (kind) => {
  let s: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    s = await setUp(kind);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('is refused before the terms are accepted and allowed after, on Growth', async () => {
    const row: Row = { caller: 'live', plan: 'growth', terms: 'none', doc: INVOICE, watermark: 'off' };
    const refused = await s.edit(row);
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json().error.code).toBe('forbidden_watermark_off');
    await s.t.app.db
      .updateTable('accounts')
      .set({ terms_accepted_at: Date.now(), terms_version: TERMS_VERSION })
      .where('email', '=', 'growth-none@example.com')
      .execute();
    // A new Idempotency-Key: without one, the same body would replay the stored 403.
    const allowed = await s.edit(row, { 'idempotency-key': 'after-terms' });
    expect(allowed.statusCode, allowed.body).toBe(200);
    expect(allowed.json().warnings).not.toContain('edited_mark');
    expect(allowed.json().usage.pages_billed).toBe(1);
  });
});

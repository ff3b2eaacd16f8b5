import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { charge, grantCredits, quotaCheck } from '../../src/billing/meter.js';
import { type BillingSubject, billingSubject } from '../../src/billing/subject.js';
import { ensureAccount } from '../../src/domain/accounts.js';
import { TERMS_VERSION } from '../../src/domain/terms.js';
import type { BillingSchema } from '../../src/store/billing-schema.js';
import { usageTotals } from '../../src/store/migrations/0009_usage_totals.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import { DB_KINDS } from '../helpers/env.js';

const NOV = Date.UTC(2026, 10, 22, 10, 0, 0);
const DEC = Date.UTC(2026, 11, 1, 0, 0, 0);

describe.each(DB_KINDS)('metering on %s', (kind) => {
  let t: TestApp;
  let n = 0;

  beforeAll(async () => {
    t = await startApp(kind);
    t.app.config.now = () => NOV;
  });
  afterAll(async () => t?.close());

  /** A fresh account with a key; the subject the edit route would build from it. */
  async function account(plan: 'free' | 'starter' | 'growth' = 'free', mode: 'live' | 'test' = 'live') {
    n += 1;
    const email = `meter${n}@example.com`;
    const key = await t.newKey(email, plan, mode);
    const acct = await ensureAccount(t.app.db, email, plan);
    const subject: BillingSubject = { kind: 'account', accountId: acct.id, mode, plan };
    return { key, subject, accountId: acct.id, email };
  }

  async function usage(key: string) {
    const res = await t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(key) });
    expect(res.statusCode).toBe(200);
    return res.json() as Record<string, number | string>;
  }

  it('GET /v1/usage starts at zero for the calendar month (UTC)', async () => {
    const { key } = await account();
    expect(await usage(key)).toEqual({
      period_start: '2026-11-01T00:00:00Z',
      period_end: '2026-12-01T00:00:00Z',
      pages_used: 0,
      allowance: 200,
      credit_pages: 0,
      remaining: 200,
      overage_pages: 0,
    });
  });

  it('GET /v1/limits answers the plan table, test keys with the free allowance', async () => {
    const growthTest = await account('growth', 'test');
    const res = await t.app.inject({ method: 'GET', url: '/v1/limits', headers: bearer(growthTest.key) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      plan: 'growth',
      mode: 'test',
      monthly_pages: 200,
      requests_per_minute: 300,
      concurrency: 8,
      max_file_bytes: 100 * 1024 * 1024,
      max_pages: 1000,
      sync_page_limit: 50,
      max_batch_records: 10_000,
      // Growth allows it, but only once the account accepted the current terms (rule 12).
      watermark_off_allowed: false,
    });
    await t.app.db
      .updateTable('accounts')
      .set({ terms_accepted_at: Date.now(), terms_version: TERMS_VERSION })
      .where('id', '=', growthTest.accountId)
      .execute();
    const accepted = await t.app.inject({
      method: 'GET',
      url: '/v1/limits',
      headers: bearer(growthTest.key),
    });
    expect(accepted.json().watermark_off_allowed).toBe(true);
    const free = await account('free');
    await t.app.db
      .updateTable('accounts')
      .set({ terms_accepted_at: Date.now(), terms_version: TERMS_VERSION })
      .where('id', '=', free.accountId)
      .execute();
    const freeRes = await t.app.inject({ method: 'GET', url: '/v1/limits', headers: bearer(free.key) });
    expect(freeRes.json().watermark_off_allowed).toBe(false);
    const noKey = await t.app.inject({ method: 'GET', url: '/v1/limits' });
    expect(noKey.statusCode).toBe(401);
  });

  it('allows work exactly at the allowance and refuses one page over, before any work', async () => {
    const { key, subject } = await account();
    await quotaCheck(t.app.db, subject, 200, NOV);
    await expect(quotaCheck(t.app.db, subject, 201, NOV)).rejects.toMatchObject({
      code: 'quota_exceeded',
      status: 402,
    });
    const c = await charge(t.app.db, subject, 'req_a', 150, {}, NOV);
    expect(c).toMatchObject({ billed: 150, allowancePages: 150, remaining: 50, replayed: false });
    await quotaCheck(t.app.db, subject, 50, NOV);
    await expect(quotaCheck(t.app.db, subject, 51, NOV)).rejects.toMatchObject({ code: 'quota_exceeded' });
    await charge(t.app.db, subject, 'req_b', 50, {}, NOV);
    await expect(quotaCheck(t.app.db, subject, 1, NOV)).rejects.toMatchObject({ code: 'quota_exceeded' });
    expect(await usage(key)).toMatchObject({ pages_used: 200, remaining: 0 });
    // A new month brings a new allowance.
    await quotaCheck(t.app.db, subject, 200, DEC);
  });

  it('charges a piece of work once, however often it is charged', async () => {
    const { key, subject } = await account();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => charge(t.app.db, subject, 'job_same', 3, {}, NOV)),
    );
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(await usage(key)).toMatchObject({ pages_used: 3, remaining: 197 });
  });

  it('charges new work in three statements, and finds work charged before by its insert', async () => {
    const { key, subject } = await account();
    // Every statement Kysely runs passes each plugin's transformResult (the transaction's
    // begin and commit do not).
    let statements = 0;
    const counted = t.app.db.withPlugin({
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        statements += 1;
        return args.result;
      },
    });
    const first = await charge(counted, subject, 'req_counted', 2, {}, NOV);
    // (PostgreSQL takes the subject's advisory lock first: one statement more.)
    const lock = kind === 'postgres' ? 1 : 0;
    // The usage read, the ledger row, the running total.
    expect({ statements, replayed: first.replayed, billed: first.billed }).toEqual({
      statements: 3 + lock,
      replayed: false,
      billed: 2,
    });
    statements = 0;
    const again = await charge(counted, subject, 'req_counted', 2, {}, NOV);
    // The usage read, the insert that adds nothing, the first charge read back.
    expect({ statements, replayed: again.replayed, billed: again.billed }).toEqual({
      statements: 3 + lock,
      replayed: true,
      billed: 2,
    });
    expect(await usage(key)).toMatchObject({ pages_used: 2, remaining: 198 });
  });

  it('counts an OCR page five times and bills nothing for zero pages', async () => {
    const { key, subject } = await account();
    expect((await charge(t.app.db, subject, 'req_ocr', 3, { ocrPages: 2 }, NOV)).billed).toBe(11);
    expect((await charge(t.app.db, subject, 'req_zero', 0, {}, NOV)).billed).toBe(0);
    expect(await usage(key)).toMatchObject({ pages_used: 11, remaining: 189 });
  });

  it('uses credit packs after the allowance; they outlive the month', async () => {
    const { key, subject, accountId } = await account();
    expect(await grantCredits(t.app.db, accountId, 'try_it', `evt_${accountId}`, NOV)).toBe(true);
    expect(await grantCredits(t.app.db, accountId, 'try_it', `evt_${accountId}`, NOV)).toBe(false);
    expect(await usage(key)).toMatchObject({ allowance: 200, credit_pages: 500, remaining: 700 });
    const c = await charge(t.app.db, subject, 'req_big', 250, {}, NOV);
    expect(c).toMatchObject({ allowancePages: 200, creditPages: 50, overagePages: 0, remaining: 450 });
    await quotaCheck(t.app.db, subject, 450, NOV);
    await expect(quotaCheck(t.app.db, subject, 451, NOV)).rejects.toMatchObject({ code: 'quota_exceeded' });
    t.app.config.now = () => DEC;
    try {
      expect(await usage(key)).toMatchObject({ pages_used: 0, credit_pages: 450, remaining: 650 });
    } finally {
      t.app.config.now = () => NOV;
    }
  });

  it('keeps test and live allowances apart; test keys never use credits', async () => {
    const live = await account('free', 'live');
    const test = await ensureAccount(t.app.db, live.email, 'free');
    const testKey = await t.newKey(live.email, 'free', 'test');
    const testSubject: BillingSubject = { kind: 'account', accountId: test.id, mode: 'test', plan: 'free' };
    await grantCredits(t.app.db, test.id, 'large', `evt_sep_${test.id}`, NOV);
    await charge(t.app.db, testSubject, 'req_t', 200, {}, NOV);
    await expect(quotaCheck(t.app.db, testSubject, 1, NOV)).rejects.toMatchObject({ code: 'quota_exceeded' });
    expect(await usage(testKey)).toMatchObject({ pages_used: 200, credit_pages: 0, remaining: 0 });
    expect(await usage(live.key)).toMatchObject({ pages_used: 0, credit_pages: 5000, remaining: 5200 });
  });

  it('lets Starter live keys run into recorded overage, never 402', async () => {
    const { key, subject } = await account('starter');
    await charge(t.app.db, subject, 'req_s1', 5000, {}, NOV);
    await quotaCheck(t.app.db, subject, 100, NOV);
    const c = await charge(t.app.db, subject, 'req_s2', 30, {}, NOV);
    expect(c).toMatchObject({ allowancePages: 0, creditPages: 0, overagePages: 30 });
    expect(await usage(key)).toMatchObject({ pages_used: 5030, remaining: 0, overage_pages: 30 });
  });

  it('gives keyless callers 20 pages a day per address, IPv6 grouped by /64', async () => {
    const a = billingSubject(undefined, '2001:db8:1:2::1');
    const sameNet = billingSubject(undefined, '2001:db8:1:2:ffff::9');
    const other = billingSubject(undefined, '2001:db8:1:3::1');
    for (let i = 0; i < 20; i++) {
      await quotaCheck(t.app.db, a, 1, NOV);
      await charge(t.app.db, a, `req_kl_${i}`, 1, {}, NOV);
    }
    // The 21st page is refused, also from another address of the same /64.
    await expect(quotaCheck(t.app.db, a, 1, NOV)).rejects.toMatchObject({ code: 'quota_exceeded' });
    await expect(quotaCheck(t.app.db, sameNet, 1, NOV)).rejects.toMatchObject({ code: 'quota_exceeded' });
    await quotaCheck(t.app.db, other, 20, NOV);
    await quotaCheck(t.app.db, a, 20, NOV + 86_400_000);
    const v4 = billingSubject(undefined, '::ffff:192.0.2.7');
    expect(v4).toEqual({ kind: 'keyless', addressGroup: '192.0.2.7' });
  });

  it('keeps the running totals equal to the ledger, and migration 0009 rebuilds them from it', async () => {
    // Charges of every kind made so far in this file (allowance, credits, overage, OCR,
    // replays, two periods, keyless days), and concurrent ones of one subject now.
    const { subject } = await account('starter');
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => charge(t.app.db, subject, `req_tot_${i % 5}`, 1 + i, {}, NOV)),
    );
    await charge(t.app.db, subject, 'req_tot_dec', 7, { ocrPages: 1 }, DEC);
    const db = t.app.db.withTables<BillingSchema>();
    const ledger = async () =>
      (
        await db
          .selectFrom('usage_charges')
          .select((eb) => [
            'subject',
            'mode',
            'period',
            eb.fn.sum<number>('billed').as('billed'),
            eb.fn.sum<number>('allowance_pages').as('allowance_pages'),
            eb.fn.sum<number>('credit_pages').as('credit_pages'),
            eb.fn.sum<number>('overage_pages').as('overage_pages'),
          ])
          .groupBy(['subject', 'mode', 'period'])
          .execute()
      ).map(numbers);
    const totals = async () => (await db.selectFrom('usage_totals').selectAll().execute()).map(numbers);
    const byKey = (rows: Record<string, unknown>[]) =>
      rows.sort((a, b) =>
        `${a.subject}|${a.mode}|${a.period}`.localeCompare(`${b.subject}|${b.mode}|${b.period}`),
      );
    const expected = byKey(await ledger());
    expect(expected.length).toBeGreaterThanOrEqual(8);
    expect(byKey(await totals())).toEqual(expected);
    await usageTotals.down!(t.app.db);
    await usageTotals.up(t.app.db);
    expect(byKey(await totals())).toEqual(expected);
  });
});

/** A row with its numeric columns as numbers (PostgreSQL answers sums as strings). */
function numbers(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(row).map(([k, v]) => [k, ['subject', 'mode', 'period'].includes(k) ? v : Number(v)]),
  );
}

import { type Kysely, PostgresAdapter, type Selectable, sql, type Transaction } from 'kysely';
import { ApiError } from '../kernel/api-error.js';
import { randomBase62 } from '../kernel/random-token.js';
import type { BillingSchema, UsageChargeRow, UsageTotalsTable } from '../store/billing-schema.js';
import { prepared } from '../store/prepared.js';
import type { Database } from '../store/schema.js';
import { CREDIT_PACKS, type CreditPack } from './plans.js';
import {
  allowanceOf,
  type BillingSubject,
  ledgerKey,
  overageAllowed,
  type Period,
  periodOf,
} from './subject.js';

/**
 * Metering: the API the edit, batch and job code calls.
 *
 *   1. Before any work: `await quotaCheck(db, subject, worstCasePages, now)`. Pass the
 *      worst case, i.e. the document's page count (times 5 when OCR is on), because which
 *      pages an edit touches is known only afterwards. Throws 402 quota_exceeded when the
 *      work could cross the limit, so a job that would cross it is refused whole.
 *   2. After the work: `await charge(db, subject, workId, pagesTouched, {ocrPages}, now)`
 *      with the pages touched by APPLIED edits (unmatched and rolled-back edits are not
 *      billed). workId is the request id for synchronous work and the job id for a job;
 *      a second call with the same workId returns the first charge and bills nothing.
 *
 * Order of cover for a charge: the period's allowance, then credit-pack pages (live mode
 * only, never expire), then overage. Overage is priced only for Starter live keys; for
 * other plans it appears only when concurrent requests passed the check together (each
 * checked against the same remainder) and the next check refuses. The split is fixed in
 * the ledger row at charge time, inside a transaction serialised per subject.
 */

type Db = Kysely<Database>;

function billingDb(db: Db | Transaction<Database>) {
  return db.withTables<BillingSchema>();
}

export interface Usage {
  period: Period;
  /** Billing units charged in the period (allowance + credits + overage). */
  pagesUsed: number;
  allowance: number;
  /** Credit-pack pages still available (live mode; 0 in test and keyless). */
  creditPages: number;
  /** Allowance left plus credit pages. */
  remaining: number;
  overagePages: number;
}

/**
 * The subject's numbers for the period containing `now` (the same numbers as GET /v1/usage):
 * one statement, the credit sums as subqueries (asked on every edit, twice: quota and charge).
 * Read from the running totals (one row per period, migration 0009), not the ledger's
 * rows, so it costs the same on the month's first edit and its ten-thousandth.
 */
export async function usageOf(
  db: Db | Transaction<Database>,
  subject: BillingSubject,
  now: number,
): Promise<Usage> {
  const period = periodOf(subject, now);
  const key = ledgerKey(subject);
  // Credit packs are live-mode only (and keyless has none).
  const credits = subject.kind === 'account' && subject.mode === 'live' ? subject.accountId : undefined;
  const [row] = await usageQuery.rows(db, {
    credits: credits ?? '',
    subject: key.subject,
    mode: key.mode,
    live: 'live',
    period: period.label,
  });
  if (!row) throw new Error('usage_totals: the sums query returned no row');
  const allowance = allowanceOf(subject);
  const creditPages = credits === undefined ? 0 : Math.max(0, Number(row.granted) - Number(row.credits_used));
  const allowanceLeft = Math.max(0, allowance - Number(row.allowance));
  return {
    period,
    pagesUsed: Number(row.billed),
    allowance,
    creditPages,
    remaining: allowanceLeft + creditPages,
    overagePages: Number(row.overage),
  };
}

type LedgerMode = ReturnType<typeof ledgerKey>['mode'];

/** usageOf's one statement, compiled once (src/store/prepared.ts): it runs twice an edit. */
const usageQuery = prepared<
  { credits: string; subject: string; mode: LedgerMode; live: LedgerMode; period: string },
  { billed: number; allowance: number; overage: number; granted: number; credits_used: number }
>(['credits', 'subject', 'mode', 'live', 'period'], (db, v) =>
  billingDb(db)
    .selectFrom('usage_totals')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<number>('billed'), eb.lit(0)).as('billed'),
      eb.fn.coalesce(eb.fn.sum<number>('allowance_pages'), eb.lit(0)).as('allowance'),
      eb.fn.coalesce(eb.fn.sum<number>('overage_pages'), eb.lit(0)).as('overage'),
      eb
        .selectFrom('credit_grants')
        .select((g) => g.fn.coalesce(g.fn.sum<number>('pages'), g.lit(0)).as('n'))
        .where('account_id', '=', v.credits)
        .$castTo<number>()
        .as('granted'),
      eb
        .selectFrom('usage_totals as used')
        .select((u) => u.fn.coalesce(u.fn.sum<number>('used.credit_pages'), u.lit(0)).as('n'))
        .where('used.subject', '=', v.credits)
        .where('used.mode', '=', v.live)
        .$castTo<number>()
        .as('credits_used'),
    ])
    .where('subject', '=', v.subject)
    .where('mode', '=', v.mode)
    .where('period', '=', v.period),
);

/** Billing units of some work: a page, an OCR page counting five (SPEC "Limits"). */
export function billingUnits(pages: number, ocrPages = 0): number {
  if (
    !Number.isInteger(pages) ||
    !Number.isInteger(ocrPages) ||
    pages < 0 ||
    ocrPages < 0 ||
    ocrPages > pages
  )
    throw new Error(`invalid page counts: pages ${pages}, ocrPages ${ocrPages}`);
  return pages + 4 * ocrPages;
}

/**
 * Refuses, before any work, work of `pagesNeeded` billing units that the subject's
 * remaining allowance and credits cannot cover (402 quota_exceeded). Starter live keys
 * are never refused here: their pages beyond cover are overage.
 */
export async function quotaCheck(
  db: Db,
  subject: BillingSubject,
  pagesNeeded: number,
  now: number,
): Promise<void> {
  if (overageAllowed(subject)) return;
  const usage = await usageOf(db, subject, now);
  if (pagesNeeded <= usage.remaining) return;
  const keyless = subject.kind === 'keyless';
  throw new ApiError(
    'quota_exceeded',
    `This needs up to ${pagesNeeded} page(s) and ${usage.remaining} remain ${keyless ? 'today' : 'this month'}.`,
    {
      hint: keyless
        ? 'Keyless use allows 20 pages a day per address; create a free account for 200 pages a month.'
        : subject.mode === 'test'
          ? 'Test keys have the free allowance each month; use a live key for real work.'
          : "Buy a credit pack or upgrade the plan; the month's allowance is used up.",
      extra: { usage: { remaining: usage.remaining, pages_needed: pagesNeeded } },
    },
  );
}

export interface Charge {
  workId: string;
  billed: number;
  allowancePages: number;
  creditPages: number;
  overagePages: number;
  /** True when this work was charged before and nothing was added now. */
  replayed: boolean;
  /** What remains (allowance + credits) after the charge. */
  remaining: number;
}

/** Serialises charges of one subject: SQLite's BEGIN IMMEDIATE already holds the write
 * lock; PostgreSQL takes a transaction-scoped advisory lock on the subject. */
async function lockSubject(
  trx: Transaction<Database>,
  key: { subject: string; mode: string },
): Promise<void> {
  if (trx.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`select pg_advisory_xact_lock(hashtext(${`${key.subject}|${key.mode}`}))`.execute(trx);
  }
}

/**
 * Charges `pages` touched (of which `ocrPages` were OCR'd) to the subject, once per
 * `workId`. Never throws for lack of quota: the work is done and is recorded as it was
 * covered (see the module comment). Zero billing units records nothing.
 */
export async function charge(
  db: Db,
  subject: BillingSubject,
  workId: string,
  pages: number,
  opts: { ocrPages?: number } = {},
  now: number = Date.now(),
): Promise<Charge> {
  return db.transaction().execute((trx) => chargeIn(trx, subject, workId, pages, opts, now));
}

/**
 * `charge` inside the caller's transaction, so that the charge commits (or not) with the
 * caller's own writes of the same work: an edit's output row and its idempotency answer.
 * The transaction then holds the subject's lock (see lockSubject) until it ends.
 */
export async function chargeIn(
  trx: Transaction<Database>,
  subject: BillingSubject,
  workId: string,
  pages: number,
  opts: { ocrPages?: number } = {},
  now: number = Date.now(),
): Promise<Charge> {
  const ocrPages = opts.ocrPages ?? 0;
  const billed = billingUnits(pages, ocrPages);
  const key = ledgerKey(subject);
  await lockSubject(trx, key);
  // The rows below are written out field by field, not as `{ ...key, ... }`: on Node 20 a
  // literal that spreads an object and then adds properties allocated 1-2 KB in V8's old
  // generation each time (garbage that only a full collection frees), three of them per
  // edit, about half of what an edit left there (issue 18 item 6; meter-garbage.test.ts).
  const before = await usageOf(trx, subject, now);
  const allowanceLeft = before.remaining - before.creditPages;
  const allowancePages = Math.min(billed, allowanceLeft);
  const creditPages = Math.min(billed - allowancePages, before.creditPages);
  const overagePages = billed - allowancePages - creditPages;
  // The ledger row is inserted unless the work id has one (its primary key): a work charged
  // before is found by the insert that adds nothing, and only then read back, so a new
  // charge (every edit's) runs three statements, not a read first and then these.
  const inserted =
    billed > 0 &&
    (await chargeInsert.run(trx, {
      subject: key.subject,
      mode: key.mode,
      work_id: workId,
      period: before.period.label,
      pages,
      ocr_pages: ocrPages,
      billed,
      allowance_pages: allowancePages,
      credit_pages: creditPages,
      overage_pages: overagePages,
      created_at: now,
    })) > 0;
  if (inserted) {
    await addToTotals(trx, {
      subject: key.subject,
      mode: key.mode,
      period: before.period.label,
      billed,
      allowance_pages: allowancePages,
      credit_pages: creditPages,
      overage_pages: overagePages,
    });
    return {
      workId,
      billed,
      allowancePages,
      creditPages,
      overagePages,
      replayed: false,
      remaining: before.remaining - allowancePages - creditPages,
    };
  }
  // Charged before (or nothing to bill now): the first charge of this work id, if any.
  const [existing] = await chargeQuery.rows(trx, { subject: key.subject, mode: key.mode, work_id: workId });
  if (existing) {
    return {
      workId,
      billed: existing.billed,
      allowancePages: existing.allowance_pages,
      creditPages: existing.credit_pages,
      overagePages: existing.overage_pages,
      replayed: true,
      remaining: before.remaining,
    };
  }
  return {
    workId,
    billed: 0,
    allowancePages: 0,
    creditPages: 0,
    overagePages: 0,
    replayed: false,
    remaining: before.remaining,
  };
}

/** Adds a ledger row's numbers to its period's running total (the caller's transaction). */
async function addToTotals(trx: Transaction<Database>, row: Selectable<UsageTotalsTable>): Promise<void> {
  await totalsUpsert.run(trx, row);
}

/** chargeIn's statements, compiled once (src/store/prepared.ts): every billed edit runs them. */
const chargeQuery = prepared<{ subject: string; mode: LedgerMode; work_id: string }, UsageChargeRow>(
  ['subject', 'mode', 'work_id'],
  (db, v) =>
    billingDb(db)
      .selectFrom('usage_charges')
      .selectAll()
      .where('subject', '=', v.subject)
      .where('mode', '=', v.mode)
      .where('work_id', '=', v.work_id),
);

const CHARGE_COLUMNS = [
  'subject',
  'mode',
  'work_id',
  'period',
  'pages',
  'ocr_pages',
  'billed',
  'allowance_pages',
  'credit_pages',
  'overage_pages',
  'created_at',
] as const satisfies readonly (keyof UsageChargeRow)[];

const chargeInsert = prepared<UsageChargeRow>(CHARGE_COLUMNS, (db, v) =>
  billingDb(db)
    .insertInto('usage_charges')
    .values(v)
    .onConflict((oc) => oc.columns(['subject', 'mode', 'work_id']).doNothing()),
);

const totalsUpsert = prepared<Selectable<UsageTotalsTable>>(
  ['subject', 'mode', 'period', 'billed', 'allowance_pages', 'credit_pages', 'overage_pages'],
  (db, v) =>
    billingDb(db)
      .insertInto('usage_totals')
      .values(v)
      .onConflict((oc) =>
        oc.columns(['subject', 'mode', 'period']).doUpdateSet((eb) => ({
          billed: eb('usage_totals.billed', '+', eb.ref('excluded.billed')),
          allowance_pages: eb('usage_totals.allowance_pages', '+', eb.ref('excluded.allowance_pages')),
          credit_pages: eb('usage_totals.credit_pages', '+', eb.ref('excluded.credit_pages')),
          overage_pages: eb('usage_totals.overage_pages', '+', eb.ref('excluded.overage_pages')),
        })),
      ),
);

/**
 * Grants a credit pack to an account, once per `reference` (the payment event id, so a
 * redelivered event grants nothing more). Returns true when granted now.
 */
export async function grantCredits(
  db: Db,
  accountId: string,
  pack: CreditPack,
  reference: string,
  now: number = Date.now(),
): Promise<boolean> {
  const result = await billingDb(db)
    .insertInto('credit_grants')
    .values({
      id: `cred_${randomBase62(12)}`,
      account_id: accountId,
      pack,
      pages: CREDIT_PACKS[pack].pages,
      reference,
      created_at: now,
    })
    .onConflict((oc) => oc.column('reference').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

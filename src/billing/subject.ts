import type { Principal } from '../kernel/principal.js';
import type { MeterMode } from '../store/billing-schema.js';
import { clientAddressGroup } from './client-ip.js';
import { PLANS, type PlanName, TEST_MODE_MONTHLY_PAGES } from './plans.js';

/**
 * Whose pages a piece of work is counted against: an account in one key mode, or (keyless
 * use) a client address group. Live and test keys of one account are two subjects with
 * two allowances; test mode never touches credits or money.
 */
export type BillingSubject =
  | { kind: 'account'; accountId: string; mode: 'live' | 'test'; plan: Exclude<PlanName, 'keyless'> }
  | { kind: 'keyless'; addressGroup: string };

/** The subject of a request: its key's account and mode, else its client address group. */
export function billingSubject(principal: Principal | undefined, clientIp: string): BillingSubject {
  if (principal) {
    return { kind: 'account', accountId: principal.accountId, mode: principal.mode, plan: principal.plan };
  }
  return { kind: 'keyless', addressGroup: clientAddressGroup(clientIp) };
}

/** The ledger's (subject, mode) columns of a subject. */
export function ledgerKey(subject: BillingSubject): { subject: string; mode: MeterMode } {
  return subject.kind === 'account'
    ? { subject: subject.accountId, mode: subject.mode }
    : { subject: `ip:${subject.addressGroup}`, mode: 'keyless' };
}

export interface Period {
  /** Ledger label: `YYYY-MM` for accounts, `YYYY-MM-DD` for keyless use. */
  label: string;
  start: number;
  end: number;
}

/** Accounts: the calendar month (UTC). Keyless: the day (UTC), 20 pages a day per address. */
export function periodOf(subject: BillingSubject, now: number): Period {
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  if (subject.kind === 'keyless') {
    const start = Date.UTC(y, m, d.getUTCDate());
    return { label: new Date(start).toISOString().slice(0, 10), start, end: start + 86_400_000 };
  }
  const start = Date.UTC(y, m, 1);
  return { label: new Date(start).toISOString().slice(0, 7), start, end: Date.UTC(y, m + 1, 1) };
}

/** Pages of the period before credits: the plan's monthly pages, the free plan's for test
 * keys, the daily pages for keyless use. */
export function allowanceOf(subject: BillingSubject): number {
  if (subject.kind === 'keyless') return PLANS.keyless.dailyPages ?? 0;
  return subject.mode === 'test' ? TEST_MODE_MONTHLY_PAGES : PLANS[subject.plan].monthlyPages;
}

/** Only live keys of a plan with an overage price go past allowance and credits (Starter);
 * the pages beyond are recorded as overage and billed by the provider. */
export function overageAllowed(subject: BillingSubject): boolean {
  return (
    subject.kind === 'account' &&
    subject.mode === 'live' &&
    PLANS[subject.plan].overageUsdPerPage !== undefined
  );
}

/** The plan whose limits apply: keyless for anonymous use, else the account's plan. */
export function planOf(subject: BillingSubject): PlanName {
  return subject.kind === 'keyless' ? 'keyless' : subject.plan;
}

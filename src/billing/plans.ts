/**
 * Plans (API-DECISIONS.md "Plans"): the one place where per-plan numbers live.
 * Sizes in bytes; `monthlyPages` for keyless is a daily allowance per client IP.
 */
import type { EngineLimits } from '../engine/tasks.js';

export type PlanName = 'keyless' | 'free' | 'starter' | 'growth' | 'scale';

export interface Plan {
  name: PlanName;
  monthlyPages: number;
  dailyPages?: number;
  requestsPerMinute: number;
  concurrency: number;
  maxFileBytes: number;
  maxPages: number;
  syncPageLimit: number;
  maxBatchRecords: number;
  watermarkOffAllowed: boolean;
  overageUsdPerPage?: number;
  /** Wall time of one synchronous engine call (ms); past it the engine process is ended and
   * the caller answered 504 engine_timeout. Capped by SYNC_TIMEOUT_MS (engineBudgetMs). */
  engineBudgetMs: number;
  /** What one document may cost the engine, checked before PDFium opens it (issue 21). */
  engineLimits: EngineLimits;
}

const MB = 1024 * 1024;

/**
 * Keyless and free callers: a stream may decode to 256 MiB (the largest corpus image,
 * 9000 x 9000 RGB, is 243 MB), 512 MiB in all; 300,000 operators a page (the corpus's
 * busiest page runs 20,002); forms 8 deep (corpus: 4) and 5,000 draws a page (corpus: 60).
 */
const TIGHT_ENGINE_LIMITS: EngineLimits = {
  streamBytes: 256 * MB,
  documentBytes: 512 * MB,
  pageOperators: 300_000,
  formDepth: 8,
  formDraws: 5_000,
};

/** Paid plans: the engine's defaults. 1M operators cost PDFium about 730 MB, inside the
 * 2 GiB address-space ceiling of an engine process. */
const PAID_ENGINE_LIMITS: EngineLimits = {
  streamBytes: 512 * MB,
  documentBytes: 2048 * MB,
  pageOperators: 1_000_000,
  formDepth: 12,
  formDraws: 20_000,
};

export const PLANS: Record<PlanName, Plan> = {
  keyless: {
    name: 'keyless',
    monthlyPages: 0,
    dailyPages: 20,
    requestsPerMinute: 10,
    concurrency: 1,
    maxFileBytes: 10 * MB,
    maxPages: 20,
    syncPageLimit: 20,
    maxBatchRecords: 0,
    watermarkOffAllowed: false,
    engineBudgetMs: 10_000,
    engineLimits: TIGHT_ENGINE_LIMITS,
  },
  free: {
    name: 'free',
    monthlyPages: 200,
    requestsPerMinute: 30,
    concurrency: 2,
    maxFileBytes: 20 * MB,
    maxPages: 100,
    syncPageLimit: 20,
    maxBatchRecords: 50,
    watermarkOffAllowed: false,
    engineBudgetMs: 15_000,
    engineLimits: TIGHT_ENGINE_LIMITS,
  },
  starter: {
    name: 'starter',
    monthlyPages: 5_000,
    requestsPerMinute: 120,
    concurrency: 4,
    maxFileBytes: 50 * MB,
    maxPages: 500,
    syncPageLimit: 30,
    maxBatchRecords: 1_000,
    watermarkOffAllowed: false,
    overageUsdPerPage: 0.005,
    engineBudgetMs: 30_000,
    engineLimits: PAID_ENGINE_LIMITS,
  },
  growth: {
    name: 'growth',
    monthlyPages: 20_000,
    requestsPerMinute: 300,
    concurrency: 8,
    maxFileBytes: 100 * MB,
    maxPages: 1_000,
    syncPageLimit: 50,
    maxBatchRecords: 10_000,
    watermarkOffAllowed: true,
    engineBudgetMs: 60_000,
    engineLimits: PAID_ENGINE_LIMITS,
  },
  scale: {
    name: 'scale',
    monthlyPages: 100_000,
    requestsPerMinute: 1_200,
    concurrency: 32,
    maxFileBytes: 200 * MB,
    maxPages: 2_000,
    syncPageLimit: 50,
    maxBatchRecords: 50_000,
    watermarkOffAllowed: true,
    engineBudgetMs: 60_000,
    engineLimits: PAID_ENGINE_LIMITS,
  },
};

/** The budget of one synchronous engine call for a plan, within the service's ceiling. */
export function engineBudgetMs(plan: PlanName, ceilingMs: number): number {
  return Math.min(PLANS[plan].engineBudgetMs, ceilingMs);
}

// The plan names an account can hold are defined with the principal (src/kernel), which
// imports nothing; they are handed on here, beside the numbers of each plan.
export { ACCOUNT_PLANS, type AccountPlan, isAccountPlan } from '../kernel/principal.js';

/** Credit packs (SPEC "Limits"): pages that never expire, used after the monthly allowance. */
export const CREDIT_PACKS = {
  try_it: { pages: 500 },
  large: { pages: 5_000 },
} as const;
export type CreditPack = keyof typeof CREDIT_PACKS;

export function isCreditPack(value: string): value is CreditPack {
  return Object.hasOwn(CREDIT_PACKS, value);
}

/** Test-mode keys count against a separate allowance: the free plan's (API-DECISIONS). */
export const TEST_MODE_MONTHLY_PAGES = PLANS.free.monthlyPages;

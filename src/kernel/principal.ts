/**
 * Who is calling, as every layer sees it. The plan names an account can hold live here
 * (not in billing/plans.ts, which holds the numbers of each plan) so that this kernel
 * imports nothing of the project: store, billing and domain all read a principal.
 */

/** Plans an account can hold (keyless is not an account plan). */
export const ACCOUNT_PLANS = ['free', 'starter', 'growth', 'scale'] as const;
export type AccountPlan = (typeof ACCOUNT_PLANS)[number];

export function isAccountPlan(value: string): value is AccountPlan {
  return (ACCOUNT_PLANS as readonly string[]).includes(value);
}

export type KeyMode = 'live' | 'test';

/** Who is calling: set by the auth plugin from the Bearer key. */
export interface Principal {
  accountId: string;
  keyId: string;
  mode: KeyMode;
  plan: AccountPlan;
}

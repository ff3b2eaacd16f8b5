import type { AccountPlan } from '../billing/plans.js';

export type KeyMode = 'live' | 'test';

/** Who is calling: set by the auth plugin from the Bearer key. */
export interface Principal {
  accountId: string;
  keyId: string;
  mode: KeyMode;
  plan: AccountPlan;
}

/**
 * Tables and columns of migration 0007_self_service, reached through
 * `db.withTables<SelfServiceSchema>()` (as billing-schema.ts does), so schema.ts stays as it is.
 */
export type SelfServiceSchema = {
  sign_in_links: SignInLinksTable;
  sessions: SessionsTable;
  billing_events: BillingEventsTable;
  checkouts: CheckoutsTable;
  pack_payments: PackPaymentsTable;
  invoices: InvoicesTable;
  accounts: AccountPaymentColumns;
  api_keys: { name: string | null };
};

export interface SignInLinksTable {
  token_hash: string;
  email: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface SessionsTable {
  token_hash: string;
  account_id: string;
  created_at: number;
  expires_at: number;
}

export interface AccountPaymentColumns {
  provider_customer: string | null;
  provider_subscription: string | null;
  /** End of the paid period of the subscription (epoch ms). */
  period_end: number | null;
  /** The plan the account moves to at period_end (a cancel: `free`). */
  plan_at_period_end: string | null;
  /** `created` time of the last subscription event applied: older ones arriving late change nothing. */
  plan_event_at: number | null;
  /** Set by a dispute: every key of the account answers 402 until an operator clears it. */
  hold_reason: string | null;
  closed_at: number | null;
}

export interface BillingEventsTable {
  provider: string;
  event_id: string;
  type: string;
  account_id: string | null;
  applied_at: number;
}

export interface CheckoutsTable {
  id: string;
  account_id: string;
  provider: string;
  kind: 'plan' | 'pack';
  item: string;
  created_at: number;
  expires_at: number;
  completed_at: number | null;
}

export interface PackPaymentsTable {
  payment_ref: string;
  account_id: string;
  pack: string;
  amount_cents: number;
  created_at: number;
}

export interface InvoicesTable {
  id: string;
  account_id: string;
  period: string;
  overage_pages: number;
  amount_cents: number;
  provider: string;
  provider_ref: string | null;
  created_at: number;
}

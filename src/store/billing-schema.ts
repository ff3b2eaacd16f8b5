import type { Selectable } from 'kysely';

/** Tables of migration 0003_billing, reached through `db.withTables<BillingSchema>()`. */
export type BillingSchema = {
  usage_charges: UsageChargesTable;
  usage_totals: UsageTotalsTable;
  credit_grants: CreditGrantsTable;
};

/** `live`/`test` for keys; `keyless` for anonymous use counted per client address group. */
export type MeterMode = 'live' | 'test' | 'keyless';

export interface UsageChargesTable {
  /** Account id, or `ip:<group>` for keyless use. */
  subject: string;
  mode: MeterMode;
  /** Request id (sync work) or job id: one charge per piece of work. */
  work_id: string;
  /** `YYYY-MM` (accounts, calendar month UTC) or `YYYY-MM-DD` (keyless, day UTC). */
  period: string;
  pages: number;
  ocr_pages: number;
  /** Billing units: pages, an OCR page counting five. */
  billed: number;
  allowance_pages: number;
  credit_pages: number;
  overage_pages: number;
  created_at: number;
}

/** Migration 0009: the ledger's sums per subject, mode and period, kept by `charge`. */
export interface UsageTotalsTable {
  subject: string;
  mode: MeterMode;
  period: string;
  billed: number;
  allowance_pages: number;
  credit_pages: number;
  overage_pages: number;
}

export interface CreditGrantsTable {
  id: string;
  account_id: string;
  pack: string;
  pages: number;
  reference: string;
  created_at: number;
}

export type UsageChargeRow = Selectable<UsageChargesTable>;

import type { Insertable, Selectable, Updateable } from 'kysely';
import type { KeyMode } from '../kernel/principal.js';

/**
 * The database as Kysely sees it. One interface per table; later issues add tables here
 * together with a migration in `migrations/`.
 *
 * Timestamps are integer epoch milliseconds in both dialects (PostgreSQL `bigint`, read
 * back as a JS number by the type parser installed in db.ts): one representation, no
 * time-zone or driver-specific Date handling, and trivially comparable in SQL.
 */
export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
}

export interface AccountsTable {
  /** `acct_` + base62. */
  id: string;
  /** Lower-cased and trimmed; one account per email (SPEC "Authentication" 9). */
  email: string;
  /** An `AccountPlan`; checked when read. */
  plan: string;
  /** `whsec_` + base62: signs outbound job webhooks. Never logged. */
  webhook_secret: string;
  created_at: number;
  /** When the document-integrity terms were accepted (SPEC rule 12); null until then. */
  terms_accepted_at: number | null;
  /** The version of the terms accepted (see migration 0006_terms). */
  terms_version: string | null;
}

export interface ApiKeysTable {
  /** `key_` + base62: the handle used to revoke a key without knowing it. */
  id: string;
  account_id: string;
  mode: KeyMode;
  /** First 12 characters of the key (`sk_live_abcd`), to recognise it in listings. */
  prefix: string;
  /** sha256 hex of the full key; the key itself is never stored. */
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

export type AccountRow = Selectable<AccountsTable>;
export type NewAccountRow = Insertable<AccountsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKeyRow = Insertable<ApiKeysTable>;
export type ApiKeyUpdate = Updateable<ApiKeysTable>;

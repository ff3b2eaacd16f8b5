import type { Migration } from 'kysely';
import { accountsAndKeys } from './0001_accounts_keys.js';
import { files } from './0002_files.js';
import { billing } from './0003_billing.js';
import { idempotency } from './0004_idempotency.js';
import { jobs } from './0005_jobs.js';
import { terms } from './0006_terms.js';
import { selfService } from './0007_self_service.js';
import { recordAttempts } from './0008_record_attempts.js';
import { usageTotals } from './0009_usage_totals.js';

/**
 * Every migration, by name. Kysely runs them in the order of their names, so a new one
 * gets the next number and one line here; a name, once shipped, never changes.
 */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_accounts_keys': accountsAndKeys,
  '0002_files': files,
  '0003_billing': billing,
  '0004_idempotency': idempotency,
  '0005_jobs': jobs,
  '0006_terms': terms,
  '0007_self_service': selfService,
  '0008_record_attempts': recordAttempts,
  '0009_usage_totals': usageTotals,
};

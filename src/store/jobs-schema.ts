import type { Generated, Selectable } from 'kysely';
import type { KeyMode } from '../kernel/principal.js';

/**
 * Tables of migration 0005_jobs, reached through `db.withTables<JobsSchema>()` (as
 * files-schema.ts does), so schema.ts stays untouched while other tables are written.
 */
export type JobsSchema = {
  jobs: JobsTable;
  job_records: JobRecordsTable;
  webhook_deliveries: WebhookDeliveriesTable;
};

export type JobKind = 'edit' | 'batch';
export type JobStatus = 'queued' | 'running' | 'done' | 'partial' | 'failed';
export type RecordStatus = 'pending' | 'running' | 'done' | 'partial' | 'failed';

export interface JobsTable {
  /** `job_` + base62. */
  id: string;
  account_id: string;
  mode: KeyMode;
  /** The plan when queued: its limits apply to the whole job. */
  plan: string;
  kind: JobKind;
  status: JobStatus;
  request: string;
  webhook_url: string | null;
  owner: string | null;
  lease_until: number;
  attempts: number;
  progress_total: number;
  pages_billed: number;
  changes_count: number;
  result: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  expires_at: number;
}

export interface JobRecordsTable {
  job_id: string;
  idx: number;
  status: RecordStatus;
  /** The record's values (JSON object). */
  vals: string;
  owner: string | null;
  lease_until: number;
  pages_billed: number;
  changes_count: number;
  /** `records[]` entry once finished (JSON). */
  result: string | null;
  /** Claims of this record (migration 0008): internal failures are retried up to a cap. */
  attempts: Generated<number>;
}

export interface WebhookDeliveriesTable {
  id: string;
  job_id: string;
  account_id: string;
  url: string;
  body: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number;
  owner: string | null;
  lease_until: number;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
}

export type JobRow = Selectable<JobsTable>;
export type JobRecordRow = Selectable<JobRecordsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;

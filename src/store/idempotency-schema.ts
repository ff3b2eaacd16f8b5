/** Table of migration 0004_idempotency. */
export type IdempotencySchema = { idempotency_records: IdempotencyRecordsTable };

export interface IdempotencyRecordsTable {
  scope: string;
  key: string;
  route: string;
  body_hash: string;
  state: 'running' | 'done';
  owner: string;
  lease_until: number;
  response_status: number | null;
  response_headers: string | null;
  response_body: string | null;
  /** `json` (body is JSON text) or `base64` (binary body, e.g. a PDF). */
  response_encoding: string | null;
  created_at: number;
  expires_at: number;
}

import type { Selectable } from 'kysely';
import type { KeyMode } from '../kernel/principal.js';

/**
 * The `files` table (migration 0002_files). Kept beside schema.ts rather than in it while
 * schema.ts is being written; code reaches it through `db.withTables<FilesSchema>()`, and
 * once `Database` includes `files` that call becomes a no-op.
 */
export type FilesSchema = { files: FilesTable };

export type FileKind = 'upload' | 'output' | 'preview';
export type FileStatus = 'reserved' | 'stored';

export interface FilesTable {
  /** `file_` + 22 base62 characters (128 random bits): the id is also a capability hint. */
  id: string;
  account_id: string;
  mode: KeyMode;
  kind: FileKind;
  /** Outputs and previews point at the file they were made from; deleted with it. */
  parent_id: string | null;
  status: FileStatus;
  /** Blob of the stored bytes; unique per upload attempt, so racing PUTs cannot mix. */
  blob_key: string | null;
  /** Upload cap fixed at reservation from the account's plan. */
  max_bytes: number;
  size: number | null;
  content_type: string;
  sha256: string | null;
  created_at: number;
  expires_at: number;
  deleted_at: number | null;
}

export type FileRow = Selectable<FilesTable>;

import type { Readable } from 'node:stream';

/**
 * Where document bytes live (uploads, outputs, previews). Rows in `files` say what a blob
 * is; the store only keeps bytes by key. Implementations: local disk (`blobs-disk.ts`);
 * S3-compatible storage later, behind the same interface, so every method is async and
 * works on streams.
 */
export interface BlobStore {
  /**
   * Stores `body` under `key`, all or nothing: a reader never sees a half-written blob.
   * Over `maxBytes` (counted while streaming) it stores nothing and throws ApiError
   * 'too_large'. Returns the size and the sha256 (hex) of what was stored. On any failure
   * the source stream is destroyed (a request body cannot be resumed anyway).
   */
  put(key: string, body: Readable | Buffer, opts: { maxBytes: number }): Promise<BlobPutResult>;
  /** The bytes and their size, or undefined when there is no such blob. */
  get(key: string): Promise<BlobReadResult | undefined>;
  stat(key: string): Promise<{ size: number } | undefined>;
  /** Removes the blob; a missing blob is not an error (deletes are retried by retention). */
  delete(key: string): Promise<void>;
}

export interface BlobPutResult {
  size: number;
  sha256: string;
}

export interface BlobReadResult {
  stream: Readable;
  size: number;
}

/** The key rule (src/kernel/blob-key.ts, shared with the engine processes). */
export { assertBlobKey } from '../kernel/blob-key.js';

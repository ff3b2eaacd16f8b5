/**
 * An edit's output written by the engine process itself (issue 18 item 5): the output's
 * bytes go straight from the engine to the blob store's directory instead of over the IPC
 * channel to the API process, which then wrote them. Only for the local-disk blob store:
 * the pool gives its engine processes that directory (`PDFEDIT_OUTPUT_DIR`, set from the
 * service's own configuration, never from a request), and a task names only the blob key
 * its output row reserved, checked here against the store's key rule, so no task can make
 * an engine process write anywhere else.
 *
 * The same write as `DiskBlobStore.put` (src/kernel/blob-file.ts): a temporary dot-file
 * renamed into place, so neither a reader nor a process killed mid-write sees half a blob. The API process marks the row stored only after the reply says written.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { writeBlobFileSync } from '../kernel/blob-file.js';
import { assertBlobKey } from '../kernel/blob-key.js';

/** The environment variable that gives an engine process the blob directory. */
export const OUTPUT_DIR_ENV = 'PDFEDIT_OUTPUT_DIR';

/** What the engine process reports of an output it wrote (replaces the bytes in the reply). */
export interface WrittenOutput {
  size: number;
  sha256: string;
}

/**
 * Writes `bytes` under `key` in `dir` (all or nothing). Throws on a key that is not a blob
 * key, a directory that is not absolute, or a failed write (its temp file removed).
 */
export function writeOutputFile(dir: string, key: string, bytes: Uint8Array): WrittenOutput {
  assertBlobKey(key); // before anything is made on disk
  if (!path.isAbsolute(dir)) throw new Error('output directory must be absolute');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return writeBlobFileSync(dir, key, bytes);
}

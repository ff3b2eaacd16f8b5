/**
 * One blob written as a file, all or nothing: the bytes go to a temporary dot-file in the
 * blob directory (a dot is never the first character of a key, so no read can take it for
 * a blob), which is then renamed onto the key: a rename within one file system is atomic,
 * so a reader sees no blob or all of it, and a process killed mid-write leaves only the
 * `.tmp-` file, which the sweep removes. Used by the local-disk blob store and by an engine
 * process that writes an edit's output itself (src/engine/output-file.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { assertBlobKey } from './blob-key.js';

/** A fresh temporary path for the blob `key` in `dir` (the key checked first). */
export function blobTempPath(dir: string, key: string): string {
  assertBlobKey(key);
  return path.join(dir, `.tmp-${key}-${randomBytes(6).toString('hex')}`);
}

/**
 * Writes `bytes` as the blob `key` in the existing directory `dir` with synchronous calls
 * (for buffers small enough that blocking the thread costs less than libuv's round trips).
 * Throws on a key that is not a blob key or a failed write, its temporary file removed.
 */
export function writeBlobFileSync(
  dir: string,
  key: string,
  bytes: Uint8Array,
): { size: number; sha256: string } {
  const temp = blobTempPath(dir, key);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  try {
    writeFileSync(temp, bytes, { flag: 'wx', mode: 0o600 });
    renameSync(temp, path.join(dir, key));
  } catch (err) {
    try {
      unlinkSync(temp);
    } catch {
      // never created, or already gone
    }
    throw err;
  }
  return { size: bytes.byteLength, sha256 };
}

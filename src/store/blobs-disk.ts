import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError } from '../kernel/api-error.js';
import { blobTempPath, writeBlobFileSync } from '../kernel/blob-file.js';
import { assertBlobKey, type BlobPutResult, type BlobReadResult, type BlobStore } from './blobs.js';

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException)?.code === 'ENOENT';
}

/**
 * Buffers up to this size are written with synchronous calls. An asynchronous write is four
 * trips through libuv's thread pool (open, write, close, rename), each waiting for a thread
 * and then for the event loop again: on a loaded machine that was 2.5–3.5 ms of a one-page
 * edit's answer, where the same write done in place blocks the loop for ~0.4 ms
 * (issue 18 item 5). Larger buffers keep the asynchronous path, so no request stalls the
 * others for long.
 */
const SYNC_WRITE_MAX_BYTES = 1024 * 1024;

function tooLarge(maxBytes: number): ApiError {
  return new ApiError('too_large', `The document is larger than the plan allows (${maxBytes} bytes).`);
}

/**
 * Blobs as files under `<dataDir>/blobs`, one file per key.
 *
 * A put writes to a temporary file in the same directory and renames it into place:
 * rename within one file system is atomic, so a reader sees either no blob or all of it,
 * and a crash leaves only a `.tmp-` file (ignored by every read; a sweep may remove it).
 */
export class DiskBlobStore implements BlobStore {
  readonly dir: string;
  private ready: Promise<unknown> | undefined;

  constructor(dataDir: string) {
    this.dir = path.join(dataDir, 'blobs');
  }

  private pathOf(key: string): string {
    assertBlobKey(key);
    return path.join(this.dir, key);
  }

  private ensureDir(): Promise<unknown> {
    this.ready ??= mkdir(this.dir, { recursive: true, mode: 0o700 });
    return this.ready;
  }

  async put(key: string, body: Readable | Buffer, opts: { maxBytes: number }): Promise<BlobPutResult> {
    const target = this.pathOf(key);
    if (Buffer.isBuffer(body) && body.length > opts.maxBytes) throw tooLarge(opts.maxBytes);
    await this.ensureDir();
    if (Buffer.isBuffer(body)) return this.putBuffer(key, target, body);
    const temp = blobTempPath(this.dir, key);
    const hash = createHash('sha256');
    let size = 0;
    // Counts and hashes on the way through; past the limit it fails the pipeline at once,
    // which stops reading the source, so an oversized upload is never written out whole.
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > opts.maxBytes) return done(tooLarge(opts.maxBytes));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
    // pipe(), not pipeline(), from the source: a failure here unpipes the source but does
    // not destroy it, so the caller can still drain an over-long request before answering.
    const input = new PassThrough();
    source.once('error', (err) => input.destroy(err));
    // A client that goes away mid-upload may only close; pipe() would not pass that on.
    source.once('close', () => {
      if (!source.readableEnded) input.destroy(new Error('upload aborted before its end'));
    });
    source.pipe(input);
    try {
      await pipeline(input, meter, createWriteStream(temp, { flags: 'wx', mode: 0o600 }));
      await rename(temp, target);
    } catch (err) {
      source.unpipe(input);
      await unlink(temp).catch(() => {});
      throw err;
    }
    return { size, sha256: hash.digest('hex') };
  }

  /**
   * An engine output or preview already in memory: one write of the whole buffer instead of
   * a stream pipeline (a few event-loop turns and chunk copies per call, measured at 1–3 ms
   * of a one-page edit's answer), with the same temp-then-rename atomicity.
   */
  private async putBuffer(key: string, target: string, body: Buffer): Promise<BlobPutResult> {
    if (body.length <= SYNC_WRITE_MAX_BYTES) return writeBlobFileSync(this.dir, key, body);
    const sha256 = createHash('sha256').update(body).digest('hex');
    const temp = blobTempPath(this.dir, key);
    try {
      await writeFile(temp, body, { flag: 'wx', mode: 0o600 });
      await rename(temp, target);
    } catch (err) {
      await unlink(temp).catch(() => {});
      throw err;
    }
    return { size: body.length, sha256 };
  }

  async get(key: string): Promise<BlobReadResult | undefined> {
    const file = this.pathOf(key);
    // Open first, then stat the open handle: size and bytes come from the same file even
    // if the key is deleted in between.
    const handle = await open(file, 'r').catch((err: unknown) => {
      if (isMissing(err)) return undefined;
      throw err;
    });
    if (!handle) return undefined;
    try {
      const { size } = await handle.stat();
      return { stream: handle.createReadStream({ autoClose: true }), size };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async stat(key: string): Promise<{ size: number } | undefined> {
    try {
      const s = await stat(this.pathOf(key));
      return { size: s.size };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  /**
   * Removes the `.tmp-` files of puts that never finished (the process was killed mid-write)
   * and were last written before `olderThan` (epoch ms): a put in progress keeps writing, so
   * its file stays recent. Returns how many were removed.
   */
  async sweepTemp(olderThan: number): Promise<number> {
    const names = await readdir(this.dir).catch((err: unknown) => {
      if (isMissing(err)) return [] as string[];
      throw err;
    });
    let removed = 0;
    for (const name of names) {
      if (!name.startsWith('.tmp-')) continue;
      const file = path.join(this.dir, name);
      try {
        if ((await stat(file)).mtimeMs >= olderThan) continue;
        await unlink(file);
        removed++;
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
    }
    return removed;
  }

  async delete(key: string): Promise<void> {
    try {
      await unlink(this.pathOf(key));
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
  }
}

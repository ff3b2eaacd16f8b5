import { buffer } from 'node:stream/consumers';
import type { BlobStore } from './blobs.js';

/**
 * Bytes of stored blobs kept in memory by blob key, so a document edited again (an uploaded
 * file sent as `source.file_id` call after call, a batch template, an output whose preview
 * is fetched) is not read back from the store each time (issue 18 item 5: on a one-page
 * edit the read was 1–7 ms of the answer on a busy machine, more than any other step).
 *
 * A blob key is written once and never rewritten (every put takes a fresh random key), so
 * what is kept can never be stale. The cache is not an authority: every caller finds the
 * file's row first (owner, stored, not deleted, not expired) and only then asks here, so a
 * deleted or expired file is never served from memory; deleting a blob also drops it here.
 * Bounded by total bytes (oldest out first) and by age: 32 MiB holds a few hundred
 * one-page documents, or four at the largest size kept; what a service holds here it holds
 * for good once the cache is full (issue 18 item 6), so the bound is part of its memory.
 */
export class BlobBytesCache {
  private readonly entries = new Map<string, { bytes: Buffer; expires: number }>();
  private total = 0;

  constructor(
    readonly maxBytes = 32 * 1024 * 1024,
    /** Larger blobs are read each time: one of them would push out many small ones. */
    readonly maxEntryBytes = 8 * 1024 * 1024,
    readonly ttlMs = 10 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): Buffer | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expires <= this.now()) {
      this.drop(key);
      return undefined;
    }
    // Map order is insertion order: re-inserting makes this the most recently used.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit.bytes;
  }

  set(key: string, bytes: Buffer): void {
    this.drop(key);
    if (bytes.length > this.maxEntryBytes) return;
    this.entries.set(key, { bytes, expires: this.now() + this.ttlMs });
    this.total += bytes.length;
    while (this.total > this.maxBytes) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.drop(oldest);
    }
  }

  drop(key: string): void {
    const hit = this.entries.get(key);
    if (!hit) return;
    this.entries.delete(key);
    this.total -= hit.bytes.length;
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.total;
  }
}

/** One cache per blob store (a test app has its own store, and so its own cache). */
const caches = new WeakMap<BlobStore, BlobBytesCache>();

export function blobBytesCache(blobs: BlobStore): BlobBytesCache {
  let cache = caches.get(blobs);
  if (!cache) {
    cache = new BlobBytesCache();
    caches.set(blobs, cache);
  }
  return cache;
}

/**
 * The whole bytes of a blob (from memory when read or written lately), or undefined when
 * the store has no such blob. The caller has checked the file's row. The buffer is shared:
 * callers must not write into it.
 */
export async function readBlobBytes(blobs: BlobStore, key: string): Promise<Buffer | undefined> {
  const cache = blobBytesCache(blobs);
  const hit = cache.get(key);
  if (hit) return hit;
  const blob = await blobs.get(key);
  if (!blob) return undefined;
  const bytes = await buffer(blob.stream);
  cache.set(key, bytes);
  return bytes;
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BlobBytesCache, blobBytesCache, readBlobBytes } from '../../src/store/blob-bytes.js';
import { DiskBlobStore } from '../../src/store/blobs-disk.js';

describe('BlobBytesCache', () => {
  it('keeps blobs up to its byte bound, oldest out first, and reading one makes it the newest', () => {
    const cache = new BlobBytesCache(10, 8);
    cache.set('a', Buffer.alloc(4));
    cache.set('b', Buffer.alloc(4));
    expect(cache.get('a')).toBeDefined(); // a is now the most recent
    cache.set('c', Buffer.alloc(4)); // 12 > 10: b goes
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    expect(cache.get('c')).toBeDefined();
    expect(cache.bytes).toBe(8);
    // Over the per-entry bound: not kept at all.
    cache.set('big', Buffer.alloc(9));
    expect(cache.get('big')).toBeUndefined();
    expect(cache.bytes).toBe(8);
    cache.drop('a');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.bytes).toBe(4);
  });

  it('forgets a blob past its age', () => {
    let now = 1_000;
    const cache = new BlobBytesCache(100, 100, 50, () => now);
    cache.set('a', Buffer.from('pdf'));
    now += 49;
    expect(cache.get('a')?.toString()).toBe('pdf');
    now += 1;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });
});

describe('readBlobBytes', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('reads a blob from the store once, then from memory, and reads again after a drop', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'blob-bytes-'));
    const store = new DiskBlobStore(dir);
    await store.put('file_a-1', Buffer.from('%PDF-1.7 a'), { maxBytes: 100 });
    const get = vi.spyOn(store, 'get');
    expect((await readBlobBytes(store, 'file_a-1'))?.toString()).toBe('%PDF-1.7 a');
    expect((await readBlobBytes(store, 'file_a-1'))?.toString()).toBe('%PDF-1.7 a');
    expect(get).toHaveBeenCalledTimes(1);
    blobBytesCache(store).drop('file_a-1');
    await store.delete('file_a-1');
    expect(await readBlobBytes(store, 'file_a-1')).toBeUndefined();
    expect(get).toHaveBeenCalledTimes(2);
  });
});

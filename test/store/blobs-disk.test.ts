import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/kernel/api-error.js';
import { DiskBlobStore } from '../../src/store/blobs-disk.js';

let dataDir: string;
let store: DiskBlobStore;

beforeEach(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'pdfedit-blobs-'));
  store = new DiskBlobStore(dataDir);
});

afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('DiskBlobStore', () => {
  it('stores, reads, stats and deletes', async () => {
    const body = Buffer.from('%PDF-1.7 hello');
    const put = await store.put('file_abc', Readable.from([body.subarray(0, 5), body.subarray(5)]), {
      maxBytes: 100,
    });
    expect(put).toEqual({ size: body.length, sha256: createHash('sha256').update(body).digest('hex') });
    const got = await store.get('file_abc');
    expect(got?.size).toBe(body.length);
    expect(await text(got!.stream)).toBe(body.toString());
    expect(await store.stat('file_abc')).toEqual({ size: body.length });
    await store.delete('file_abc');
    expect(await store.get('file_abc')).toBeUndefined();
    expect(await store.stat('file_abc')).toBeUndefined();
    await store.delete('file_abc'); // idempotent
  });

  it.each(['../escape', 'a/b', '..', '.tmp-x', '', 'a\\b', 'x'.repeat(201), 'file\0'])(
    'refuses the key %j',
    async (key) => {
      await expect(store.put(key, Buffer.from('x'), { maxBytes: 10 })).rejects.toThrow(/invalid blob key/);
      await expect(store.get(key)).rejects.toThrow(/invalid blob key/);
      await expect(store.delete(key)).rejects.toThrow(/invalid blob key/);
    },
  );

  it('enforces the limit while streaming and leaves no temp file', async () => {
    const source = Readable.from(
      (function* () {
        for (let i = 0; i < 100; i++) yield Buffer.alloc(1024, 1);
      })(),
    );
    const err = await store.put('file_big', source, { maxBytes: 10_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('too_large');
    expect(readdirSync(store.dir)).toEqual([]);
    await expect(store.put('file_big', Buffer.alloc(11), { maxBytes: 10 })).rejects.toThrow(/larger/);
  });

  it('publishes by rename: nothing is visible until the body is complete', async () => {
    const source = new PassThrough();
    const pending = store.put('file_slow', source, { maxBytes: 1000 });
    source.write('%PDF-');
    await new Promise((r) => setTimeout(r, 50));
    expect(await store.get('file_slow')).toBeUndefined();
    expect(readdirSync(store.dir).every((n) => n.startsWith('.tmp-'))).toBe(true);
    source.end('1.7');
    await pending;
    expect(readdirSync(store.dir)).toEqual(['file_slow']);
    // Overwriting replaces the whole blob in one step as well.
    await store.put('file_slow', Buffer.from('new'), { maxBytes: 1000 });
    expect(await text((await store.get('file_slow'))!.stream)).toBe('new');
  });

  it('removes the temp file when the source fails midway', async () => {
    const source = new PassThrough();
    const pending = store.put('file_abort', source, { maxBytes: 1000 });
    source.write('partial');
    await new Promise((r) => setTimeout(r, 20));
    source.destroy(new Error('client went away'));
    await expect(pending).rejects.toThrow(/client went away/);
    expect(readdirSync(store.dir)).toEqual([]);
  });

  it('sweeps the temp files of puts that never finished, and only those, once they are stale', async () => {
    await store.put('file_kept', Buffer.from('%PDF-1.7 kept'), { maxBytes: 100 });
    // As a process killed mid-write leaves them: one an hour old, one just written.
    const stale = path.join(store.dir, '.tmp-file_dead-aaaaaa');
    const fresh = path.join(store.dir, '.tmp-file_busy-bbbbbb');
    writeFileSync(stale, 'half');
    writeFileSync(fresh, 'half');
    const hourAgo = new Date(Date.now() - 61 * 60_000);
    utimesSync(stale, hourAgo, hourAgo);
    expect(await store.sweepTemp(Date.now() - 60 * 60_000)).toBe(1);
    expect(readdirSync(store.dir).sort()).toEqual(['.tmp-file_busy-bbbbbb', 'file_kept']);
    expect(await new DiskBlobStore(path.join(dataDir, 'none')).sweepTemp(Date.now())).toBe(0);
  });
});

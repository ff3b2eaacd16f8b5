import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type S3Config } from '../../src/config.js';
import { S3BlobStore } from '../../src/store/blobs-s3.js';
import { HAVE_MOTO, type Moto, startMoto } from '../helpers/moto.js';

describe.skipIf(!HAVE_MOTO)('S3BlobStore against moto_server on loopback', () => {
  let moto: Moto;
  let store: S3BlobStore;
  let cfg: S3Config;

  beforeAll(async () => {
    moto = await startMoto();
    cfg = loadConfig({
      DATA_DIR: '/tmp/pdfedit-s3-test',
      TOKEN_SECRET: 'x'.repeat(32),
      ...(await moto.env()),
    }).s3!;
    store = new S3BlobStore(cfg);
  });
  afterAll(async () => {
    store?.close();
    await moto?.stop();
  });

  const keys = async () =>
    ((await store.client.send(new ListObjectsV2Command({ Bucket: cfg.bucket }))).Contents ?? []).map(
      (o) => o.Key,
    );

  it('round-trips bytes with size and sha256', async () => {
    const bytes = Buffer.from('%PDF-1.7\nhello\n%%EOF\n');
    const put = await store.put('file_abc-1', bytes, { maxBytes: 1024 });
    expect(put.size).toBe(bytes.length);
    expect(put.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(await store.stat('file_abc-1')).toEqual({ size: bytes.length });
    const got = await store.get('file_abc-1');
    expect(got?.size).toBe(bytes.length);
    expect(await buffer(got!.stream)).toEqual(bytes);
    await store.delete('file_abc-1');
    expect(await store.get('file_abc-1')).toBeUndefined();
    expect(await store.stat('file_abc-1')).toBeUndefined();
    await store.delete('file_abc-1');
  });

  it('streams a multipart-sized body', async () => {
    const big = Buffer.alloc(12 * 1024 * 1024, 7);
    const chunks = Array.from({ length: 12 }, (_, i) => big.subarray(i * 1024 * 1024, (i + 1) * 1024 * 1024));
    const put = await store.put('file_big-1', Readable.from(chunks), { maxBytes: 20 * 1024 * 1024 });
    expect(put.size).toBe(big.length);
    expect((await store.stat('file_big-1'))?.size).toBe(big.length);
    await store.delete('file_big-1');
  });

  it('refuses a body over the cap and stores nothing', async () => {
    const before = await keys();
    const stream = Readable.from([Buffer.alloc(600), Buffer.alloc(600)]);
    await expect(store.put('file_cap-1', stream, { maxBytes: 1000 })).rejects.toMatchObject({
      code: 'too_large',
    });
    await expect(store.put('file_cap-2', Buffer.alloc(1001), { maxBytes: 1000 })).rejects.toMatchObject({
      code: 'too_large',
    });
    const multi = Readable.from(Array.from({ length: 8 }, () => Buffer.alloc(1024 * 1024)));
    await expect(store.put('file_cap-3', multi, { maxBytes: 6 * 1024 * 1024 })).rejects.toMatchObject({
      code: 'too_large',
    });
    expect(await keys()).toEqual(before);
  });

  it('refuses keys that could name other objects', async () => {
    await expect(store.put('../x', Buffer.from('a'), { maxBytes: 10 })).rejects.toThrow(/invalid blob key/);
  });
});

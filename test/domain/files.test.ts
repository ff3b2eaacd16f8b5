import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createStoredFile,
  deleteFile,
  type FileOwner,
  findFile,
  findFileById,
  isExpired,
  markStored,
  reserveFile,
  sweepExpiredFiles,
} from '../../src/domain/files.js';
import { DiskBlobStore } from '../../src/store/blobs-disk.js';
import { migrateToLatest, openDatabase } from '../../src/store/db.js';
import type { Database } from '../../src/store/schema.js';
import { DB_KINDS, makeTestEnv, type TestEnv } from '../helpers/env.js';

const BYTES = Buffer.from('%PDF-1.7\n%%EOF\n');

describe.each(DB_KINDS)('files domain on %s', (kind) => {
  let env: TestEnv;
  let db: Kysely<Database>;
  let close: () => Promise<void>;
  let blobs: DiskBlobStore;
  const owner: FileOwner = { accountId: 'acct_files', mode: 'live' };

  beforeAll(async () => {
    env = await makeTestEnv(kind);
    const opened = openDatabase(env.config.databaseUrl);
    db = opened.db;
    close = opened.close;
    await migrateToLatest(db);
    await db
      .insertInto('accounts')
      .values({
        id: owner.accountId,
        email: 'files@example.com',
        plan: 'free',
        webhook_secret: 'w',
        created_at: 0,
      })
      .execute();
    blobs = new DiskBlobStore(env.config.dataDir);
  });

  afterAll(async () => {
    await close?.();
    await env?.cleanup();
  });

  async function stored(parentId: string | null = null, ttlMs = 60_000) {
    const file = await reserveFile(db, owner, {
      kind: 'output',
      contentType: 'application/pdf',
      maxBytes: 1000,
      ttlMs,
      parentId,
    });
    const blobKey = `${file.id}-k`;
    const put = await blobs.put(blobKey, BYTES, { maxBytes: 1000 });
    expect(await markStored(db, file.id, { blobKey, ...put })).toBe(true);
    return { ...file, blobKey };
  }

  it('reserves with a 128-bit id and stores exactly once', async () => {
    const file = await reserveFile(db, owner, {
      kind: 'upload',
      contentType: 'application/pdf',
      maxBytes: 10,
      ttlMs: 1000,
    });
    expect(file.id).toMatch(/^file_[0-9A-Za-z]{22}$/);
    expect(file.status).toBe('reserved');
    const one = { blobKey: 'b1', size: 1, sha256: 'a'.repeat(64) };
    const [first, second] = await Promise.all([
      markStored(db, file.id, one),
      markStored(db, file.id, { ...one, blobKey: 'b2' }),
    ]);
    expect([first, second].filter(Boolean)).toHaveLength(1);
    const row = await findFile(db, owner, file.id);
    expect(row).toMatchObject({ status: 'stored', size: 1 });
    expect(typeof row?.created_at).toBe('number');
  });

  it('creates a stored output in one step', async () => {
    const parent = await stored();
    const out = await createStoredFile(db, blobs, owner, {
      kind: 'preview',
      contentType: 'image/png',
      ttlMs: 60_000,
      parentId: parent.id,
      bytes: BYTES,
    });
    expect(await findFile(db, owner, out.id)).toEqual(out);
    expect((await blobs.stat(out.blob_key!))?.size).toBe(BYTES.length);
  });

  it('scopes find by account and mode, and hides expired files', async () => {
    const f = await stored();
    expect(await findFile(db, owner, f.id)).toBeDefined();
    expect(await findFile(db, { ...owner, mode: 'test' }, f.id)).toBeUndefined();
    expect(await findFile(db, { ...owner, accountId: 'acct_other' }, f.id)).toBeUndefined();
    expect(isExpired(f, f.expires_at)).toBe(true);
    expect(isExpired(f, f.expires_at - 1)).toBe(false);
    expect(await findFileById(db, f.id, f.expires_at)).toBeUndefined();
  });

  it('deletes a file with its descendants at any depth, and their blobs', async () => {
    const root = await stored();
    const child = await stored(root.id);
    const grandchild = await stored(child.id);
    const unrelated = await stored();
    expect(await deleteFile(db, blobs, { ...owner, mode: 'test' }, root.id)).toBe(false);
    expect(await deleteFile(db, blobs, owner, root.id)).toBe(true);
    for (const f of [root, child, grandchild]) {
      expect(await findFileById(db, f.id)).toBeUndefined();
      expect(await blobs.stat(f.blobKey)).toBeUndefined();
    }
    expect(await findFileById(db, unrelated.id)).toBeDefined();
    expect(await deleteFile(db, blobs, owner, root.id)).toBe(false);
  });

  it('sweeps expired files and their blobs', async () => {
    const old = await stored(null, 1);
    const fresh = await stored();
    await new Promise((r) => setTimeout(r, 5));
    expect(await sweepExpiredFiles(db, blobs)).toBeGreaterThanOrEqual(1);
    expect(await blobs.stat(old.blobKey)).toBeUndefined();
    expect(await blobs.stat(fresh.blobKey)).toEqual({ size: BYTES.length });
    expect(await sweepExpiredFiles(db, blobs)).toBe(0);
  });
});

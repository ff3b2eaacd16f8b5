import type { Kysely } from 'kysely';
import type { KeyMode } from '../kernel/principal.js';
import { randomBase62 } from '../kernel/random-token.js';
import { blobBytesCache } from '../store/blob-bytes.js';
import type { BlobStore } from '../store/blobs.js';
import type { FileKind, FileRow, FilesSchema } from '../store/files-schema.js';
import { prepared } from '../store/prepared.js';
import type { Database } from '../store/schema.js';

export type { FileKind, FileRow } from '../store/files-schema.js';

/** Whose a file is: an account in one key mode (test files are invisible to live keys). */
export interface FileOwner {
  accountId: string;
  mode: KeyMode;
}

type Db = Kysely<Database>;

function filesDb(db: Db) {
  return db.withTables<FilesSchema>();
}

/** 16 random bytes: 128 bits, well above what guessing or enumeration could reach. */
export function newFileId(): string {
  return `file_${randomBase62(16)}`;
}

/** Retention (SPEC rule 15): a file past `expires_at` is gone, whether or not swept yet. */
export function isExpired(file: Pick<FileRow, 'expires_at'>, now: number = Date.now()): boolean {
  return file.expires_at <= now;
}

/** Usable: not deleted, not expired. Status is checked by the caller (reserved vs stored). */
function isLive(file: FileRow, now: number): boolean {
  return file.deleted_at === null && !isExpired(file, now);
}

export interface ReserveInput {
  kind: FileKind;
  contentType: string;
  maxBytes: number;
  ttlMs: number;
  parentId?: string | null;
  now?: number;
  /** The blob key the bytes will be written under, fixed now (a file the service
   * produces): should the process die before the row says stored, the retention sweep
   * still finds the blob through the row and removes it. Uploads leave it null: each PUT
   * chooses its own. */
  blobKey?: string | null;
}

/** The statements of every edit's files (the source's row, the output's reservation and
 * its marking stored), compiled once (src/store/prepared.ts). */
const FILE_COLUMNS = [
  'id',
  'account_id',
  'mode',
  'kind',
  'parent_id',
  'status',
  'blob_key',
  'max_bytes',
  'size',
  'content_type',
  'sha256',
  'created_at',
  'expires_at',
  'deleted_at',
] as const satisfies readonly (keyof FileRow)[];

const fileInsert = prepared<FileRow>(FILE_COLUMNS, (db, v) => filesDb(db).insertInto('files').values(v));

const ownedFile = prepared<{ id: string; accountId: string; mode: KeyMode }, FileRow>(
  ['id', 'accountId', 'mode'],
  (db, v) =>
    filesDb(db)
      .selectFrom('files')
      .selectAll()
      .where('id', '=', v.id)
      .where('account_id', '=', v.accountId)
      .where('mode', '=', v.mode),
);

type MarkValues = {
  stored: 'stored';
  reserved: 'reserved';
  blobKey: string;
  size: number;
  sha256: string;
  id: string;
};
/** reserved → stored; a produced file's cap becomes its size. */
const markAs = (produced: boolean) =>
  prepared<MarkValues>(['stored', 'reserved', 'blobKey', 'size', 'sha256', 'id'], (db, v) =>
    filesDb(db)
      .updateTable('files')
      .set({
        status: v.stored,
        blob_key: v.blobKey,
        size: v.size,
        sha256: v.sha256,
        ...(produced ? { max_bytes: v.size } : {}),
      })
      .where('id', '=', v.id)
      .where('status', '=', v.reserved)
      .where('deleted_at', 'is', null),
  );
const markUpload = markAs(false);
const markProduced = markAs(true);

/** A new `reserved` row; its bytes arrive later through markStored. */
export async function reserveFile(
  db: Db,
  owner: FileOwner,
  input: ReserveInput,
  id: string = newFileId(),
): Promise<FileRow> {
  const now = input.now ?? Date.now();
  const row: FileRow = {
    id,
    account_id: owner.accountId,
    mode: owner.mode,
    kind: input.kind,
    parent_id: input.parentId ?? null,
    status: 'reserved',
    blob_key: input.blobKey ?? null,
    max_bytes: input.maxBytes,
    size: null,
    content_type: input.contentType,
    sha256: null,
    created_at: now,
    expires_at: now + input.ttlMs,
    deleted_at: null,
  };
  await fileInsert.run(db, row);
  return row;
}

/**
 * reserved → stored, once. The condition on `status` makes it a compare-and-set: of two
 * racing uploads exactly one wins; the loser gets false and removes its own blob.
 */
export async function markStored(
  db: Db,
  id: string,
  stored: {
    blobKey: string;
    size: number;
    sha256: string;
    /** A file the service produced (reserveProduced): its cap is its size. */
    produced?: boolean;
  },
): Promise<boolean> {
  const values = {
    stored: 'stored',
    reserved: 'reserved',
    blobKey: stored.blobKey,
    size: stored.size,
    sha256: stored.sha256,
    id,
  } as const;
  const changed = await (stored.produced ? markProduced : markUpload).run(db, values);
  return changed > 0;
}

/**
 * A file the service produces (an output or a preview) in one step: reserve, write the
 * blob, mark stored. The row and the blob are written at once (the blob key is made from
 * the id before either exists), so the answer waits for the slower of the two, not their
 * sum; the row says `stored` only after both. Returns the stored row; link it with
 * `fileUrl(config, id, 'get', expires_at)`.
 */
export async function createStoredFile(
  db: Db,
  blobs: BlobStore,
  owner: FileOwner,
  input: Omit<ReserveInput, 'maxBytes'> & {
    bytes: Buffer;
    /** The id to give it (newFileId()), when files derived from it are stored at the same time. */
    id?: string;
    /** Keep the bytes in the blob cache (default): false for bytes that are seldom read back
     * (a copy kept only for previews), which would push out the ones that are. */
    cache?: boolean;
  },
): Promise<FileRow> {
  const id = input.id ?? newFileId();
  const blobKey = `${id}-${randomBase62(8)}`;
  const [reserved, put] = await Promise.allSettled([
    // The key in the row from the start: a blob written by a process that dies before the
    // row says stored is still found (and removed) by the retention sweep.
    reserveFile(db, owner, { ...input, maxBytes: input.bytes.length, blobKey }, id),
    blobs.put(blobKey, input.bytes, { maxBytes: input.bytes.length }),
  ]);
  if (reserved.status === 'rejected') {
    // No row will ever name this blob: remove it now rather than leave it unreferenced.
    if (put.status === 'fulfilled') await blobs.delete(blobKey).catch(() => {});
    throw reserved.reason;
  }
  // A blob that could not be written leaves the reserved row, which expires (as before).
  if (put.status === 'rejected') throw put.reason;
  const file = reserved.value;
  const stored = put.value;
  if (!(await markStored(db, file.id, { blobKey, ...stored }))) {
    await blobs.delete(blobKey);
    throw new Error(`file ${file.id} was deleted while it was being stored`);
  }
  // The bytes are in hand: a later read (a job's input, read by its worker) needs no store.
  if (input.cache !== false) blobBytesCache(blobs).set(blobKey, input.bytes);
  return { ...file, status: 'stored', blob_key: blobKey, size: stored.size, sha256: stored.sha256 };
}

/** A file the service will produce, its row reserved and its blob key chosen before the
 * bytes exist (see `reserveProduced`). */
export interface ProducedFile {
  id: string;
  blobKey: string;
  expiresAt: number;
}

/** A fresh blob key for the file `id` (every put takes a new one: a key is never rewritten). */
export function producedBlobKey(id: string): string {
  return `${id}-${randomBase62(8)}`;
}

/**
 * Reserves the row of a file the service is about to produce (an edit's output, reserved
 * while the engine works, so that the answer waits only for the bytes and one commit):
 * `reserved`, with its blob key fixed. `putProduced` writes the bytes, then `markStored`
 * (in the caller's transaction) makes it `stored`. Until then nobody can read it; a row
 * left reserved (the edit failed, the process died) expires, and the sweep removes the
 * blob its key names, if any was written.
 */
export async function reserveProduced(
  db: Db,
  owner: FileOwner,
  input: Omit<ReserveInput, 'maxBytes' | 'blobKey'> & {
    id?: string;
    /** The key chosen before (`producedBlobKey(id)`), when the bytes are written by
     * someone else while the row is reserved (an engine process: src/engine/output-file.ts). */
    blobKey?: string;
  },
): Promise<ProducedFile> {
  const id = input.id ?? newFileId();
  const blobKey = input.blobKey ?? producedBlobKey(id);
  // max_bytes is an upload's cap; a produced file's is its size, set when it is stored.
  // Field by field, not `{ ...input, ... }` (old-generation garbage per edit: chargeIn).
  const row = await reserveFile(
    db,
    owner,
    {
      kind: input.kind,
      contentType: input.contentType,
      ttlMs: input.ttlMs,
      parentId: input.parentId,
      now: input.now,
      maxBytes: 0,
      blobKey,
    },
    id,
  );
  return { id, blobKey, expiresAt: row.expires_at };
}

/**
 * Writes a produced file's bytes under its reserved key. The row is still `reserved`: the
 * caller marks it stored, with the size and digest returned here.
 *
 * The bytes are not kept in the blob cache: most outputs are downloaded once or never read
 * by the service again (a preview or a further edit reads them into the cache then). Kept,
 * every edit's output lived in memory until later ones pushed it out: over 10,000 one-page
 * edits the cache was full (64 MiB) after the first 10 %, and the service's resident set
 * ended at 264 MiB; without it, 198 MiB (issue 18 item 6, bench/http.ts).
 */
export async function putProduced(
  blobs: BlobStore,
  file: ProducedFile,
  bytes: Buffer,
): Promise<{ size: number; sha256: string }> {
  return blobs.put(file.blobKey, bytes, { maxBytes: bytes.length });
}

/**
 * A produced file that will not be stored after all (the edit failed or changed nothing):
 * its reserved row is marked deleted, so the retention sweep removes whatever blob its key
 * may name (a write that failed halfway on an object store).
 */
export async function dropReserved(db: Db, id: string, now: number = Date.now()): Promise<void> {
  await filesDb(db)
    .updateTable('files')
    .set({ deleted_at: now })
    .where('id', '=', id)
    .where('status', '=', 'reserved')
    .where('deleted_at', 'is', null)
    .execute();
}

/**
 * A file as its owner sees it: another account or the other key mode gets undefined
 * (answered as not_found, so existence never leaks), as do deleted and expired files.
 */
export async function findFile(
  db: Db,
  owner: FileOwner,
  id: string,
  now: number = Date.now(),
): Promise<FileRow | undefined> {
  const [row] = await ownedFile.rows(db, { id, accountId: owner.accountId, mode: owner.mode });
  return row && isLive(row, now) ? row : undefined;
}

/** A file by id alone, for signed-link routes where the token is the authorisation. */
export async function findFileById(
  db: Db,
  id: string,
  now: number = Date.now(),
): Promise<FileRow | undefined> {
  const row = await filesDb(db).selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
  return row && isLive(row, now) ? row : undefined;
}

/** The file and every file derived from it, at any depth (outputs of outputs, previews). */
async function withDescendants(db: Db, id: string): Promise<FileRow[]> {
  const all: FileRow[] = [];
  let frontier = [id];
  const seen = new Set<string>();
  while (frontier.length > 0) {
    const rows = await filesDb(db)
      .selectFrom('files')
      .selectAll()
      .where((eb) => eb.or([eb('id', 'in', frontier), eb('parent_id', 'in', frontier)]))
      .execute();
    const next: string[] = [];
    for (const row of rows) {
      if (seen.has(row.id)) continue;
      seen.add(row.id);
      all.push(row);
      next.push(row.id);
    }
    frontier = next;
  }
  return all;
}

/**
 * Deletes an owner's file with everything derived from it. The rows are marked deleted
 * first (so nothing is served from this moment), then the blobs are removed. A blob whose
 * removal fails stays behind a deleted row, where the retention sweep retries it.
 * Returns false when the owner has no such file.
 */
export async function deleteFile(
  db: Db,
  blobs: BlobStore,
  owner: FileOwner,
  id: string,
  now: number = Date.now(),
): Promise<boolean> {
  if (!(await findFile(db, owner, id, now))) return false;
  const tree = (await withDescendants(db, id)).filter(
    (f) => f.account_id === owner.accountId && f.mode === owner.mode,
  );
  await filesDb(db)
    .updateTable('files')
    .set({ deleted_at: now })
    .where(
      'id',
      'in',
      tree.map((f) => f.id),
    )
    .where('deleted_at', 'is', null)
    .execute();
  await removeBlobs(blobs, tree);
  return true;
}

async function removeBlobs(blobs: BlobStore, rows: FileRow[]): Promise<void> {
  const keys = rows.map((f) => f.blob_key).filter((k): k is string => k !== null);
  const cache = blobBytesCache(blobs);
  for (const k of keys) cache.drop(k);
  await Promise.allSettled(keys.map((k) => blobs.delete(k)));
}

/**
 * Retention: marks every file past its expiry deleted and removes the blobs of deleted
 * files. Safe to run from several processes; returns how many files were swept.
 */
export async function sweepExpiredFiles(db: Db, blobs: BlobStore, now: number = Date.now()): Promise<number> {
  await filesDb(db)
    .updateTable('files')
    .set({ deleted_at: now })
    .where('expires_at', '<=', now)
    .where('deleted_at', 'is', null)
    .execute();
  const gone = await filesDb(db)
    .selectFrom('files')
    .selectAll()
    .where('deleted_at', 'is not', null)
    .where('blob_key', 'is not', null)
    .limit(1000)
    .execute();
  await removeBlobs(blobs, gone);
  // The blob is gone (or never existed): forget its key so the next sweep skips the row.
  if (gone.length > 0) {
    await filesDb(db)
      .updateTable('files')
      .set({ blob_key: null })
      .where(
        'id',
        'in',
        gone.map((f) => f.id),
      )
      .execute();
  }
  return gone.length;
}

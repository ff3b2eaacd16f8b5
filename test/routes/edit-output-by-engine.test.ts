import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EditTask } from '../../src/engine/tasks.js';
import { DiskBlobStore } from '../../src/store/blobs-disk.js';
import type { FilesSchema } from '../../src/store/files-schema.js';
import { corpusPath } from '../helpers/corpus.js';
import { type EditApp, startEditApp } from '../helpers/edit-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

// Issue 18 items 3 and 5: with the local-disk store, a sync edit's output is written by
// the engine process under the key its row reserved; the API process only marks the row
// stored, after the reply says the bytes are in place.
describe.skipIf(!HAVE_CORPUS)('sync edit: output written by the engine process', () => {
  let a: EditApp;
  beforeAll(async () => {
    a = await startEditApp({ 'invoice.pdf': corpusPath(INVOICE) }, 'engine-output');
  });
  afterAll(async () => {
    await a?.close();
  });
  const edits = [{ find: 'INV-0046', replace: 'INV-0064' }];
  const files = () => a.t.app.db.withTables<FilesSchema>();

  it('stores the output without this process writing it; the row says stored only after the bytes are on disk', async () => {
    const blobs = a.t.app.blobs as DiskBlobStore;
    expect(blobs).toBeInstanceOf(DiskBlobStore);
    const engine = a.t.app.engine;
    const orig = engine.edit.bind(engine);
    const seen: { key?: string; status?: string; onDisk?: boolean; bytes?: number }[] = [];
    const statusOf = async (id: string) =>
      (
        await files()
          .selectFrom('files')
          .select(['status', 'blob_key'])
          .where('id', '=', id)
          .executeTakeFirst()
      )?.status;
    const spy = vi.spyOn(engine, 'edit').mockImplementation(async (task, ms) => {
      const key = (task as Omit<EditTask, 'op'>).output;
      const id = key?.split('-')[0] ?? '';
      const r = await orig(task, ms);
      const status = await statusOf(id);
      seen.push({
        ...(key !== undefined ? { key } : {}),
        ...(status ? { status } : {}),
        onDisk: key !== undefined && existsSync(path.join(blobs.dir, key)),
        bytes: r.pdf.byteLength,
      });
      return r;
    });
    const put = vi.spyOn(blobs, 'put');
    try {
      const res = await a.edit('invoice.pdf', edits);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { output: { file_id: string; url: string } };
      expect(seen).toHaveLength(1);
      const [call] = seen;
      // The engine wrote it; the row was still reserved when its reply came.
      expect(call!.key?.startsWith(`${body.output.file_id}-`)).toBe(true);
      expect(call!).toMatchObject({ status: 'reserved', onDisk: true, bytes: 0 });
      // Nothing of the output went through this process's store (the request's document
      // copy for lazy previews is its only put).
      expect(put.mock.calls.map(([k]) => k).filter((k) => k === call!.key)).toEqual([]);
      const row = await files()
        .selectFrom('files')
        .selectAll()
        .where('id', '=', body.output.file_id)
        .executeTakeFirstOrThrow();
      const disk = readFileSync(path.join(blobs.dir, call!.key!));
      expect(row).toMatchObject({
        status: 'stored',
        blob_key: call!.key,
        size: disk.length,
        sha256: sha(disk),
      });
      const downloaded = await a.download(body.output.url);
      expect(downloaded.equals(disk)).toBe(true);
      expect(a.textOf(downloaded)).toContain('INV-0064');
    } finally {
      spy.mockRestore();
      put.mockRestore();
    }
  });

  it('with Accept: application/pdf the bytes come back from the engine, as before', async () => {
    const spy = vi.spyOn(a.t.app.engine, 'edit');
    try {
      const res = await a.edit('invoice.pdf', edits, undefined, { accept: 'application/pdf' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe('application/pdf');
      expect(a.textOf(res.rawPayload)).toContain('INV-0064');
      expect((spy.mock.calls[0]![0] as Omit<EditTask, 'op'>).output).toBeUndefined();
    } finally {
      spy.mockRestore();
    }
  });
  it('asks the engine to write only once the output row naming its key is in', async () => {
    const db = a.t.app.db;
    const exec = db.executeQuery.bind(db);
    let reservedAt = 0;
    let calledAt = 0;
    let tick = 0;
    // The output's reservation is slow (a remote database under load): the engine must wait
    // for it, or a crash of this process in between would leave a blob no row names, which
    // the retention sweep never finds.
    const insert = vi.spyOn(db, 'executeQuery').mockImplementation(((q: Parameters<typeof exec>[0]) => {
      const c = q as CompiledQuery;
      if (/^insert into "files"/i.test(c.sql) && c.parameters.includes('output')) {
        return new Promise((r) => setTimeout(r, 50)).then(async () => {
          const out = await exec(q);
          reservedAt = ++tick;
          return out;
        });
      }
      return exec(q);
    }) as typeof db.executeQuery);
    const engine = a.t.app.engine;
    const orig = engine.edit.bind(engine);
    const spy = vi.spyOn(engine, 'edit').mockImplementation(async (task, ms) => {
      calledAt = ++tick;
      return orig(task, ms);
    });
    try {
      const res = await a.edit('invoice.pdf', edits, undefined, { 'idempotency-key': 'slow-reservation' });
      expect(res.statusCode, res.body).toBe(200);
      expect((spy.mock.calls[0]![0] as Omit<EditTask, 'op'>).output).toBeDefined();
      expect(reservedAt).toBeGreaterThan(0);
      expect(calledAt).toBeGreaterThan(reservedAt);
    } finally {
      insert.mockRestore();
      spy.mockRestore();
    }
  });

  it("writes the request's document copy (lazy previews' before side) once the engine has the task", async () => {
    const blobs = a.t.app.blobs as DiskBlobStore;
    const engine = a.t.app.engine;
    const events: string[] = [];
    const orig = engine.edit.bind(engine);
    const spy = vi.spyOn(engine, 'edit').mockImplementation((task, ms) => {
      events.push('engine');
      return orig(task, ms);
    });
    const origPut = blobs.put.bind(blobs);
    const put = vi.spyOn(blobs, 'put').mockImplementation((key, bytes, opts) => {
      events.push('put');
      return origPut(key, bytes, opts);
    });
    try {
      const res = await a.edit('invoice.pdf', edits, undefined, { 'idempotency-key': 'copy-after-engine' });
      expect(res.statusCode, res.body).toBe(200);
      // The copy is this process's only put (the engine writes the output), and it waits
      // for nothing the engine does: it is written while the engine works.
      expect(events).toEqual(['engine', 'put']);
      const link = new URL(
        (res.json() as { changes: { before_preview_url: string }[] }).changes[0]!.before_preview_url,
      );
      expect(link.searchParams.get('before')).toBeTruthy();
    } finally {
      spy.mockRestore();
      put.mockRestore();
    }
  });

  it('does not ask the engine to write when the output row could not be reserved', async () => {
    const blobs = a.t.app.blobs as DiskBlobStore;
    const db = a.t.app.db;
    const engine = vi.spyOn(a.t.app.engine, 'edit');
    const exec = db.executeQuery.bind(db);
    // The output's reservation (an insert of a row of kind 'output') fails; all else runs.
    const insert = vi.spyOn(db, 'executeQuery').mockImplementation(((q: Parameters<typeof exec>[0]) => {
      const c = q as CompiledQuery;
      if (/^insert into "files"/i.test(c.sql) && c.parameters.includes('output')) {
        return Promise.reject(new Error('reservation refused (test)'));
      }
      return exec(q);
    }) as typeof db.executeQuery);
    try {
      const res = await a.edit('invoice.pdf', edits, undefined, { 'idempotency-key': 'reserve-fails' });
      expect(res.statusCode, res.body).toBe(500);
      // No row could name a blob, so the engine was never asked to write one: every blob
      // on disk is named by a row (the retention sweep's way to every blob).
      expect(engine).not.toHaveBeenCalled();
      const named = new Set(
        (await files().selectFrom('files').select(['blob_key']).execute()).map((r) => r.blob_key),
      );
      const onDisk = readdirSync(blobs.dir).filter((k) => !k.startsWith('.tmp-'));
      expect(onDisk.length).toBeGreaterThan(0);
      expect(onDisk.filter((k) => !named.has(k))).toEqual([]);
    } finally {
      insert.mockRestore();
      engine.mockRestore();
    }
  });
});

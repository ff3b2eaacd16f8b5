import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureAccount } from '../../src/domain/accounts.js';
import { type FileOwner, markStored, reserveProduced } from '../../src/domain/files.js';
import { jobsDb } from '../../src/domain/jobs.js';
import { RecordWriter, type StoredEntry } from '../../src/queue/record-writer.js';
import { migrateToLatest, type OpenDatabase, openDatabase } from '../../src/store/db.js';
import type { FilesSchema } from '../../src/store/files-schema.js';
import type { Database } from '../../src/store/schema.js';
import { DB_KINDS, makeTestEnv, type TestEnv } from '../helpers/env.js';

const JOB = 'job_writertest';
const OWNER = 'shard-a';

/** Issue 18 item 3: a batch's finished records are stored several to a transaction. */
describe.each(DB_KINDS)('batch record writer (%s)', (kind) => {
  let env: TestEnv;
  let opened: OpenDatabase;
  let owner: FileOwner;

  beforeEach(async () => {
    env = await makeTestEnv(kind);
    opened = openDatabase(env.config.databaseUrl);
    await migrateToLatest(opened.db);
    const account = await ensureAccount(opened.db, 'writer@example.com', 'scale');
    owner = { accountId: account.id, mode: 'live' };
    await jobsDb(opened.db)
      .insertInto('jobs')
      .values({
        id: JOB,
        account_id: account.id,
        mode: 'live',
        plan: 'scale',
        kind: 'batch',
        status: 'running',
        request: '{}',
        webhook_url: null,
        owner: null,
        lease_until: 0,
        attempts: 0,
        progress_total: 4,
        pages_billed: 0,
        changes_count: 0,
        result: null,
        created_at: 0,
        started_at: null,
        finished_at: null,
        expires_at: 10_000_000,
      })
      .execute();
    await jobsDb(opened.db)
      .insertInto('job_records')
      .values(
        Array.from({ length: 4 }, (_, idx) => ({
          job_id: JOB,
          idx,
          status: 'running' as const,
          vals: '{}',
          owner: OWNER,
          lease_until: 10_000,
          attempts: 1,
          pages_billed: 0,
          changes_count: 0,
          result: null,
        })),
      )
      .execute();
  });

  afterEach(async () => {
    await opened.close();
    await env.cleanup();
  });

  const entry = (idx: number): StoredEntry & { index: number } => ({
    index: idx,
    status: 'done',
    changes: [{ page: 1 }],
    pages: 1,
  });

  /** An output row reserved as runEdit reserves it, and its deferred mark. */
  const output = async () => {
    const f = await reserveProduced(opened.db, owner, {
      kind: 'output',
      contentType: 'application/pdf',
      ttlMs: 60_000,
      parentId: null,
      now: Date.now(),
    });
    const mark = async (dbx: Kysely<Database>) => {
      if (!(await markStored(dbx, f.id, { blobKey: f.blobKey, size: 3, sha256: 'x', produced: true })))
        throw new Error(`file ${f.id} was deleted while it was being stored`);
    };
    return { id: f.id, mark };
  };

  const fileStatus = async (id: string) =>
    (
      await opened.db
        .withTables<FilesSchema>()
        .selectFrom('files')
        .select('status')
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).status;
  const rows = () =>
    jobsDb(opened.db)
      .selectFrom('job_records')
      .select(['idx', 'status', 'owner', 'pages_billed', 'changes_count', 'result'])
      .where('job_id', '=', JOB)
      .orderBy('idx')
      .execute();

  it('stores records finishing together in one transaction, each with its output marked stored', async () => {
    const writer = new RecordWriter(opened.db, JOB, OWNER);
    const outs = await Promise.all([0, 1, 2].map(() => output()));
    // Three records finish at once: the first is written alone, the two that finish while
    // it is written share the next transaction.
    await Promise.all(outs.map((o, idx) => writer.write({ idx, entry: entry(idx), markStored: o.mark })));
    expect(writer.transactions).toBe(2);
    for (const o of outs) expect(await fileStatus(o.id)).toBe('stored');
    const r = await rows();
    expect(r.slice(0, 3).map((x) => [x.status, x.owner, x.pages_billed, x.changes_count])).toEqual([
      ['done', null, 1, 1],
      ['done', null, 1, 1],
      ['done', null, 1, 1],
    ]);
    expect(JSON.parse(r[1]!.result!)).toEqual(entry(1));
    expect(r[3]!.status).toBe('running');
  });

  it('fails only the record whose output was deleted meanwhile; the others of its group are stored', async () => {
    const writer = new RecordWriter(opened.db, JOB, OWNER);
    const outs = await Promise.all([0, 1, 2].map(() => output()));
    await opened.db
      .withTables<FilesSchema>()
      .updateTable('files')
      .set({ deleted_at: 1 })
      .where('id', '=', outs[2]!.id)
      .execute();
    const results = await Promise.allSettled(
      outs.map((o, idx) => writer.write({ idx, entry: entry(idx), markStored: o.mark })),
    );
    expect(results.map((x) => x.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    const r = await rows();
    expect(r.map((x) => x.status)).toEqual(['done', 'done', 'running', 'running']);
    expect(await fileStatus(outs[1]!.id)).toBe('stored');
    // The failed record's row still says running under its lease: claimed again later.
    expect(r[2]!.owner).toBe(OWNER);
  });
});

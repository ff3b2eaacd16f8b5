import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CompiledQuery } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureAccount } from '../../src/domain/accounts.js';
import { jobsDb } from '../../src/domain/jobs.js';
import { claimQuery, claimRecords, unclaimRecords } from '../../src/queue/leases.js';
import { migrateToLatest, type OpenDatabase, openDatabase } from '../../src/store/db.js';

const JOB = 'job_leasestest';
const LEASE = 1000;

describe('batch record claims', () => {
  let dir: string;
  let opened: OpenDatabase;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'pdfedit-leases-'));
    opened = openDatabase(`sqlite:${path.join(dir, 'db.sqlite')}`);
    await migrateToLatest(opened.db);
    const account = await ensureAccount(opened.db, 'leases@example.com', 'scale');
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
        progress_total: 10,
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
        Array.from({ length: 10 }, (_, idx) => ({
          job_id: JOB,
          idx,
          status: 'pending' as const,
          vals: '{}',
          owner: null,
          lease_until: 0,
          pages_billed: 0,
          changes_count: 0,
          result: null,
        })),
      )
      .execute();
  });

  afterEach(async () => {
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const records = () =>
    jobsDb(opened.db)
      .selectFrom('job_records')
      .select(['idx', 'status', 'owner', 'attempts', 'lease_until'])
      .where('job_id', '=', JOB)
      .orderBy('idx')
      .execute();

  it('claims several records in one go, lowest first, never one twice; gives back the unstarted', async () => {
    const db = opened.db;
    const a = await claimRecords(db, JOB, 'a', 100, LEASE, 4);
    expect(a.map((r) => r.idx)).toEqual([0, 1, 2, 3]);
    expect(a.every((r) => r.status === 'running' && r.owner === 'a' && r.attempts === 1)).toBe(true);
    const b = await claimRecords(db, JOB, 'b', 100, LEASE, 4);
    expect(b.map((r) => r.idx)).toEqual([4, 5, 6, 7]);

    // Only the owner's own records go back; their claim is not counted as an attempt.
    await unclaimRecords(db, JOB, 'a', [2, 3, 4]);
    const after = await records();
    expect(after.slice(0, 5)).toEqual([
      { idx: 0, status: 'running', owner: 'a', attempts: 1, lease_until: 100 + LEASE },
      { idx: 1, status: 'running', owner: 'a', attempts: 1, lease_until: 100 + LEASE },
      { idx: 2, status: 'pending', owner: null, attempts: 0, lease_until: 0 },
      { idx: 3, status: 'pending', owner: null, attempts: 0, lease_until: 0 },
      { idx: 4, status: 'running', owner: 'b', attempts: 1, lease_until: 100 + LEASE },
    ]);

    // What is left: the given-back records and the two never claimed.
    const c = await claimRecords(db, JOB, 'c', 200, LEASE, 10);
    expect(c.map((r) => r.idx)).toEqual([2, 3, 8, 9]);
    expect(await claimRecords(db, JOB, 'd', 200, LEASE, 10)).toEqual([]);

    // Past their leases every running record is claimable again (its owner died).
    const e = await claimRecords(db, JOB, 'e', 200 + LEASE, LEASE, 3);
    expect(e.map((r) => r.idx)).toEqual([0, 1, 2]);
    expect(e.map((r) => r.attempts)).toEqual([2, 2, 2]);
  });

  it('leaves finished records alone', async () => {
    const db = opened.db;
    await jobsDb(db).updateTable('job_records').set({ status: 'done' }).where('idx', '<', 9).execute();
    const got = await claimRecords(db, JOB, 'a', 100, LEASE, 5);
    expect(got.map((r) => r.idx)).toEqual([9]);
    expect(await claimRecords(db, JOB, 'b', 100 + 2 * LEASE, LEASE, 5)).toEqual([
      expect.objectContaining({ idx: 9, owner: 'b', attempts: 2 }),
    ]);
  });
  it('takes expired and pending records lowest first together', async () => {
    const db = opened.db;
    await claimRecords(db, JOB, 'a', 100, LEASE, 3); // 0, 1, 2
    await jobsDb(db).updateTable('job_records').set({ status: 'done' }).where('idx', 'in', [0, 3]).execute();
    // 1 and 2 expired (a died), 3 done, 4.. pending.
    const got = await claimRecords(db, JOB, 'b', 100 + LEASE, LEASE, 3);
    expect(got.map((r) => [r.idx, r.attempts])).toEqual([
      [1, 2],
      [2, 2],
      [4, 1],
    ]);
  });

  it("finds claimable records through the claim index, not by walking the batch's finished ones", async () => {
    // The claim runs every few records: walking the primary key from the batch's first
    // record past every finished one made each claim cost grow with the records done.
    const q = claimQuery(opened.db, {
      jobId: JOB,
      owner: 'a',
      now: 100,
      leaseUntil: 100 + LEASE,
      max: 4,
      pending: 'pending',
      running: 'running',
      one: 1,
    }).compile();
    const plan = await opened.db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]),
    );
    const steps = plan.rows.map((r) => r.detail);
    // Every read of job_records is a search with the status fixed (the claim index) or by
    // the exact primary key (the update's own rows), never a walk of the job's records.
    const reads = steps.filter((d) => /job_records/.test(d));
    expect(reads.length).toBeGreaterThan(0);
    for (const d of reads)
      expect(d).toMatch(/job_records_claim_idx \(job_id=\? AND status=\?\)|\(job_id=\? AND idx=\?\)/);
  });
});

import type { Kysely } from 'kysely';
import { jobsDb } from '../domain/jobs.js';
import type { RecordStatus } from '../store/jobs-schema.js';
import type { Database } from '../store/schema.js';

/** What a record's row stores of its `records[]` entry (src/queue/batch-runner.ts). */
export interface StoredEntry {
  status: Exclude<RecordStatus, 'pending' | 'running'>;
  changes: unknown[];
  /** Billing units of the record. */
  pages: number;
}

/** A finished record's row, and the output's row to mark stored with it. */
export interface Finished<E extends StoredEntry> {
  idx: number;
  entry: E;
  markStored: ((dbx: Kysely<Database>) => Promise<void>) | undefined;
}

/**
 * Stores finished records: each record's entry with its output's row marked stored, in one
 * transaction, and the records that finish while one is being written together in the
 * next (one commit for several records instead of two per record: issue 18 item 3). A
 * record's output bytes are written before it reaches the writer, and its row says done
 * only when the transaction that also marks its output stored commits; a kill before
 * leaves the record running under its lease (claimed again) and the output's row reserved
 * (removed by the retention sweep), as one record at a time did.
 */
export class RecordWriter<E extends StoredEntry> {
  private pending: (Finished<E> & { resolve: () => void; reject: (err: unknown) => void })[] = [];
  private draining = false;

  /** Transactions written (tests). */
  transactions = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly jobId: string,
    private readonly owner: string,
  ) {}

  /** Resolves once the record's row (and its output's) are committed. */
  write(finished: Finished<E>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ ...finished, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        void this.drain();
      }
    });
  }

  private async drain(): Promise<void> {
    const { db } = this;
    while (this.pending.length > 0) {
      const group = this.pending.splice(0);
      try {
        this.transactions++;
        await db.transaction().execute(async (trx) => {
          for (const f of group) await this.store(trx, f);
        });
        for (const f of group) f.resolve();
      } catch (err) {
        if (group.length === 1) {
          group[0]!.reject(err);
          continue;
        }
        // One record's failure (its output deleted meanwhile) is not the others': each
        // is stored alone.
        for (const f of group) {
          this.transactions++;
          await db
            .transaction()
            .execute((trx) => this.store(trx, f))
            .then(f.resolve, f.reject);
        }
      }
    }
    this.draining = false;
  }

  private async store(dbx: Kysely<Database>, { idx, entry, markStored }: Finished<E>): Promise<void> {
    await markStored?.(dbx);
    await jobsDb(dbx)
      .updateTable('job_records')
      .set({
        status: entry.status,
        result: JSON.stringify(entry),
        pages_billed: entry.pages,
        changes_count: entry.changes.length,
        owner: null,
        lease_until: 0,
      })
      .where('job_id', '=', this.jobId)
      .where('idx', '=', idx)
      .where('owner', '=', this.owner)
      .execute();
  }
}

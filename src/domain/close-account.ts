import type { Kysely } from 'kysely';
import { blobBytesCache } from '../store/blob-bytes.js';
import type { BlobStore } from '../store/blobs.js';
import type { FilesSchema } from '../store/files-schema.js';
import type { JobsSchema } from '../store/jobs-schema.js';
import type { Database } from '../store/schema.js';
import type { SelfServiceSchema } from '../store/self-service-schema.js';

type Db = Kysely<Database>;

/**
 * Closes an account (issue 16, SPEC rule 15): keys revoked, sessions ended, files and
 * outputs deleted at once, job records kept without document content (the request and
 * results with their text are blanked; unfinished jobs end as failed), and the email
 * freed (the row keeps its id for the ledger under a placeholder address). The caller
 * cancels the subscription with the provider first.
 */
export async function closeAccount(db: Db, blobs: BlobStore, accountId: string, now: number): Promise<void> {
  const all = db.withTables<SelfServiceSchema>().withTables<FilesSchema>().withTables<JobsSchema>();
  const blobKeys = await all.transaction().execute(async (trx) => {
    await trx
      .updateTable('api_keys')
      .set({ revoked_at: now })
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .execute();
    await trx.deleteFrom('sessions').where('account_id', '=', accountId).execute();
    const files = await trx
      .updateTable('files')
      .set({ deleted_at: now })
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .returning('blob_key')
      .execute();
    const jobIds = (
      await trx.selectFrom('jobs').select('id').where('account_id', '=', accountId).execute()
    ).map((j) => j.id);
    if (jobIds.length > 0) {
      await trx
        .updateTable('jobs')
        .set({ status: 'failed', finished_at: now })
        .where('id', 'in', jobIds)
        .where('status', 'in', ['queued', 'running'])
        .execute();
      await trx
        .updateTable('jobs')
        .set({ request: '{"closed":true}', result: null, webhook_url: null })
        .where('id', 'in', jobIds)
        .execute();
      await trx
        .updateTable('job_records')
        .set({ vals: '{}', result: null })
        .where('job_id', 'in', jobIds)
        .execute();
      await trx.deleteFrom('webhook_deliveries').where('account_id', '=', accountId).execute();
    }
    await trx
      .updateTable('accounts')
      .set({
        email: `closed+${accountId}@closed.invalid`,
        closed_at: now,
        plan: 'free',
        plan_at_period_end: null,
        provider_subscription: null,
      })
      .where('id', '=', accountId)
      .execute();
    return files.map((f) => f.blob_key).filter((k): k is string => k !== null);
  });
  // Rows are deleted first (nothing is served from now on); a blob whose removal fails is
  // retried by the retention sweep, which removes the blobs of deleted files.
  const cache = blobBytesCache(blobs);
  for (const k of blobKeys) cache.drop(k);
  await Promise.allSettled(blobKeys.map((k) => blobs.delete(k)));
}

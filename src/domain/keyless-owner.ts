import type { Kysely } from 'kysely';
import { randomBase62 } from '../kernel/random-token.js';
import type { Database } from '../store/schema.js';
import type { FileOwner } from './files.js';

/**
 * Outputs of keyless edits need an owner row (files reference accounts). They belong to
 * one system account that has no keys, so no API key can list, read or delete them: the
 * signed link in the result is the only way to them, and retention removes them as usual.
 * Its email is not an address `ensureAccount` accepts, so no sign-up can ever claim it.
 */
export const KEYLESS_ACCOUNT_ID = 'acct_keyless';
const KEYLESS_EMAIL = '(keyless outputs)';

const ensured = new WeakSet<object>();

/** The owner of keyless outputs, creating its account row on first use (idempotent). */
export async function keylessFileOwner(db: Kysely<Database>): Promise<FileOwner> {
  if (!ensured.has(db)) {
    await db
      .insertInto('accounts')
      .values({
        id: KEYLESS_ACCOUNT_ID,
        email: KEYLESS_EMAIL,
        plan: 'free',
        // Never used: keyless work has no jobs or webhooks. Random anyway, never a constant.
        webhook_secret: `whsec_${randomBase62(24)}`,
        created_at: Date.now(),
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    ensured.add(db);
  }
  // Keyless outputs are samples, like test-mode outputs.
  return { accountId: KEYLESS_ACCOUNT_ID, mode: 'test' };
}

import type { Kysely } from 'kysely';
import { randomBase62 } from '../kernel/random-token.js';
import type { Database } from '../store/schema.js';
import { normaliseEmail } from './accounts.js';
import { newToken, selfDb, sha256Hex } from './sessions.js';

type Db = Kysely<Database>;

/** A mailed sign-in link works once, within 15 minutes. */
export const LINK_TTL_MS = 15 * 60 * 1000;

/** Records a single-use link for `email` (normalised; throws 400 on a bad address) and
 * returns its token, which only the mail carries. */
export async function createSignInLink(
  db: Db,
  email: string,
  now: number,
): Promise<{ token: string; email: string }> {
  const normal = normaliseEmail(email);
  const token = newToken();
  await selfDb(db)
    .insertInto('sign_in_links')
    .values({
      token_hash: sha256Hex(token),
      email: normal,
      created_at: now,
      expires_at: now + LINK_TTL_MS,
      used_at: null,
    })
    .execute();
  // Old links are of no use to anyone: drop those long past.
  await selfDb(db)
    .deleteFrom('sign_in_links')
    .where('expires_at', '<', now - 24 * 60 * 60 * 1000)
    .execute();
  return { token, email: normal };
}

/**
 * What a link would do, without spending it: the confirm page names the address it signs
 * in as, so a link someone else mailed you (to sign you into their account) shows itself.
 */
export async function peekSignInLink(
  db: Db,
  token: string,
  now: number,
): Promise<{ status: 'ok'; email: string } | { status: 'invalid' | 'expired' | 'used' }> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return { status: 'invalid' };
  const row = await selfDb(db)
    .selectFrom('sign_in_links')
    .select(['email', 'expires_at', 'used_at'])
    .where('token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  if (!row) return { status: 'invalid' };
  if (row.used_at !== null) return { status: 'used' };
  if (row.expires_at <= now) return { status: 'expired' };
  return { status: 'ok', email: row.email };
}

export type LinkOutcome = { status: 'ok'; accountId: string } | { status: 'invalid' | 'expired' | 'used' };

/**
 * Spends a link: one conditional update, so of two concurrent clicks only one signs in.
 * The account of the email is created on first sign-in (free plan, no card).
 */
export async function consumeSignInLink(db: Db, token: string, now: number): Promise<LinkOutcome> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return { status: 'invalid' };
  const hash = sha256Hex(token);
  const row = await selfDb(db)
    .selectFrom('sign_in_links')
    .select(['email', 'expires_at', 'used_at'])
    .where('token_hash', '=', hash)
    .executeTakeFirst();
  if (!row) return { status: 'invalid' };
  if (row.used_at !== null) return { status: 'used' };
  if (row.expires_at <= now) return { status: 'expired' };
  const spent = await selfDb(db)
    .updateTable('sign_in_links')
    .set({ used_at: now })
    .where('token_hash', '=', hash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (spent.numUpdatedRows === 0n) return { status: 'used' };
  return { status: 'ok', accountId: await accountForEmail(db, row.email, now) };
}

/** The account of an email, created on the free plan when there is none (the plan of an
 * existing account is left as it is). */
export async function accountForEmail(db: Db, email: string, now: number): Promise<string> {
  await db
    .insertInto('accounts')
    .values({
      id: `acct_${randomBase62(12)}`,
      email,
      plan: 'free',
      webhook_secret: `whsec_${randomBase62(24)}`,
      created_at: now,
      terms_accepted_at: null,
      terms_version: null,
    })
    .onConflict((oc) => oc.column('email').doNothing())
    .execute();
  const row = await db
    .selectFrom('accounts')
    .select('id')
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
  return row.id;
}

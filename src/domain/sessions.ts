import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import type { SelfServiceSchema } from '../store/self-service-schema.js';

type Db = Kysely<Database>;
export const selfDb = (db: Db) => db.withTables<SelfServiceSchema>();

/** A session lasts 30 days from sign-in; signing out ends it at once. */
export const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000;

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** 32 random bytes, base64url: the token of a session or of a sign-in link. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Opens a session for the account; returns the token for the cookie (stored hashed only). */
export async function createSession(db: Db, accountId: string, now: number): Promise<string> {
  const token = newToken();
  await selfDb(db)
    .insertInto('sessions')
    .values({
      token_hash: sha256Hex(token),
      account_id: accountId,
      created_at: now,
      expires_at: now + SESSION_TTL_MS,
    })
    .execute();
  // Sessions past their end are of no use: dropped as new ones open.
  await selfDb(db).deleteFrom('sessions').where('expires_at', '<=', now).execute();
  return token;
}

/** The account of a live session token, or undefined (unknown, expired, closed account). */
export async function sessionAccount(db: Db, token: string, now: number): Promise<string | undefined> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
  const row = await selfDb(db)
    .selectFrom('sessions')
    .innerJoin('accounts', 'accounts.id', 'sessions.account_id')
    .select([
      'sessions.account_id as accountId',
      'sessions.expires_at as expiresAt',
      'accounts.closed_at as closedAt',
    ])
    .where('sessions.token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  if (!row || row.expiresAt <= now || row.closedAt !== null) return undefined;
  return row.accountId;
}

export async function endSession(db: Db, token: string): Promise<void> {
  await selfDb(db).deleteFrom('sessions').where('token_hash', '=', sha256Hex(token)).execute();
}

export async function endAllSessions(db: Db, accountId: string): Promise<void> {
  await selfDb(db).deleteFrom('sessions').where('account_id', '=', accountId).execute();
}

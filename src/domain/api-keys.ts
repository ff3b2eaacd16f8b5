import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { KeyMode, Principal } from '../kernel/principal.js';
import { base62Length, randomBase62 } from '../kernel/random-token.js';
import { prepared } from '../store/prepared.js';
import type { Database } from '../store/schema.js';
import type { SelfServiceSchema } from '../store/self-service-schema.js';
import { toAccountPlan } from './accounts.js';
import type { TermsAcceptance } from './terms.js';

/** 24 random bytes = 192 bits: far beyond guessing, so a fast hash is the right store
 * (a slow KDF protects low-entropy passwords, not random keys; Stripe and GitHub agree). */
const KEY_RANDOM_BYTES = 24;
const KEY_SHAPE = new RegExp(`^sk_(live|test)_[0-9A-Za-z]{${base62Length(KEY_RANDOM_BYTES)}}$`);
const PREFIX_LENGTH = 12;
/** last_used_at is informative; writing it on every request would make each read a write. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface NewKey {
  /** The plaintext key: shown once, never stored. */
  key: string;
  keyId: string;
  prefix: string;
}

export type KeyLookup =
  /** `hold`: the account's hold reason (null: none), and `terms`: its acceptance of the
   * document-integrity terms, read with the key in the same statement. */
  | { status: 'ok'; principal: Principal; hold: string | null; terms: TermsAcceptance }
  | { status: 'malformed' }
  | { status: 'unknown' }
  | { status: 'revoked' };

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The mode of a well-formed key, or undefined when `key` cannot be one of ours. */
export function parseKeyMode(key: string): KeyMode | undefined {
  const m = KEY_SHAPE.exec(key);
  return m ? (m[1] as KeyMode) : undefined;
}

export async function createKey(db: Kysely<Database>, accountId: string, mode: KeyMode): Promise<NewKey> {
  if (mode !== 'live' && mode !== 'test')
    throw new Error(`key mode must be live or test, got "${String(mode)}"`);
  const account = await db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  if (!account) throw new Error(`no account ${accountId}`);
  const key = `sk_${mode}_${randomBase62(KEY_RANDOM_BYTES)}`;
  const keyId = `key_${randomBase62(12)}`;
  const prefix = key.slice(0, PREFIX_LENGTH);
  await db
    .insertInto('api_keys')
    .values({
      id: keyId,
      account_id: accountId,
      mode,
      prefix,
      key_hash: hashKey(key),
      created_at: Date.now(),
      revoked_at: null,
      last_used_at: null,
    })
    .execute();
  return { key, keyId, prefix };
}

/** Revokes by plaintext key or by `key_…` id. True when a live key was revoked now;
 * false when nothing matched or it was revoked already. */
export async function revokeKey(db: Kysely<Database>, keyOrId: string): Promise<boolean> {
  const value = keyOrId.trim();
  let query = db.updateTable('api_keys').set({ revoked_at: Date.now() }).where('revoked_at', 'is', null);
  if (value.startsWith('key_')) query = query.where('id', '=', value);
  else if (parseKeyMode(value)) query = query.where('key_hash', '=', hashKey(value));
  else return false;
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** lookupKey's statement, compiled once (src/store/prepared.ts): every keyed request runs it. */
const keyQuery = prepared<
  { hash: string },
  {
    keyId: string;
    accountId: string;
    mode: KeyMode;
    revokedAt: number | null;
    lastUsedAt: number | null;
    plan: string;
    hold: string | null;
    termsAcceptedAt: number | null;
    termsVersion: string | null;
  }
>(['hash'], (db, v) =>
  db
    .withTables<SelfServiceSchema>()
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select([
      'api_keys.id as keyId',
      'api_keys.account_id as accountId',
      'api_keys.mode as mode',
      'api_keys.revoked_at as revokedAt',
      'api_keys.last_used_at as lastUsedAt',
      'accounts.plan as plan',
      'accounts.hold_reason as hold',
      'accounts.terms_accepted_at as termsAcceptedAt',
      'accounts.terms_version as termsVersion',
    ])
    .where('api_keys.key_hash', '=', v.hash),
);

/**
 * Resolves a presented key, saying why it was refused (the auth plugin words its 401 by
 * it). The lookup is by hash over a unique index, so there is no secret-dependent string
 * comparison to time.
 */
export async function lookupKey(
  db: Kysely<Database>,
  plaintext: string,
  now = Date.now(),
): Promise<KeyLookup> {
  const mode = parseKeyMode(plaintext);
  if (!mode) return { status: 'malformed' };
  const [row] = await keyQuery.rows(db, { hash: hashKey(plaintext) });
  if (!row) return { status: 'unknown' };
  if (row.revokedAt !== null) return { status: 'revoked' };
  if (row.lastUsedAt === null || now - row.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
    // Conditional on the old value: of concurrent requests only one writes.
    await db
      .updateTable('api_keys')
      .set({ last_used_at: now })
      .where('id', '=', row.keyId)
      .where((eb) =>
        eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', now - LAST_USED_RESOLUTION_MS)]),
      )
      .execute();
  }
  return {
    status: 'ok',
    principal: { accountId: row.accountId, keyId: row.keyId, mode: row.mode, plan: toAccountPlan(row.plan) },
    hold: row.hold ?? null,
    terms: { terms_accepted_at: row.termsAcceptedAt ?? null, terms_version: row.termsVersion ?? null },
  };
}

/** The principal of a valid key; undefined for malformed, unknown or revoked keys. */
export async function authenticate(db: Kysely<Database>, plaintext: string): Promise<Principal | undefined> {
  const found = await lookupKey(db, plaintext);
  return found.status === 'ok' ? found.principal : undefined;
}

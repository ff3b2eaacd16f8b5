import type { Kysely } from 'kysely';
import { type AccountPlan, isAccountPlan } from '../billing/plans.js';
import { ApiError } from '../kernel/api-error.js';
import { randomBase62 } from '../kernel/random-token.js';
import type { Database } from '../store/schema.js';

export interface Account {
  id: string;
  email: string;
  plan: AccountPlan;
  createdAt: number;
}

/** RFC 5321 caps a forward path at 256 octets including the brackets. */
const MAX_EMAIL_LENGTH = 254;
// Deliberately loose: one @, something on both sides, a dot in the domain, no spaces.
// Whether the mailbox exists is proved by the emailed sign-in link, not by a regex.
const EMAIL_SHAPE = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

/** Trimmed and lower-cased, so `Ann@Example.com` and `ann@example.com` are one account. */
export function normaliseEmail(email: string): string {
  const normal = email.trim().toLowerCase();
  if (normal.length > MAX_EMAIL_LENGTH || !EMAIL_SHAPE.test(normal)) {
    throw new ApiError('invalid_request', `"${email}" is not a valid email address.`, {
      hint: 'Give an address like name@example.com.',
    });
  }
  return normal;
}

export function toAccountPlan(value: string): AccountPlan {
  if (!isAccountPlan(value)) throw new Error(`unknown account plan "${value}" in the database`);
  return value;
}

/**
 * Creates the account of `email`, or moves an existing one to `plan`. One upsert
 * statement, so two concurrent calls for a new email cannot create two accounts; the
 * id and webhook secret of an existing account are kept.
 */
export async function ensureAccount(
  db: Kysely<Database>,
  email: string,
  plan: AccountPlan,
): Promise<Account> {
  if (!isAccountPlan(plan)) {
    throw new ApiError('invalid_request', `Unknown plan "${String(plan)}".`, {
      hint: 'Plans: free, starter, growth, scale.',
    });
  }
  const row = await db
    .insertInto('accounts')
    .values({
      id: `acct_${randomBase62(12)}`,
      email: normaliseEmail(email),
      plan,
      webhook_secret: `whsec_${randomBase62(24)}`,
      created_at: Date.now(),
    })
    .onConflict((oc) => oc.column('email').doUpdateSet({ plan }))
    .returning(['id', 'email', 'plan', 'created_at'])
    .executeTakeFirstOrThrow();
  return { id: row.id, email: row.email, plan: toAccountPlan(row.plan), createdAt: row.created_at };
}

export async function findAccountByEmail(db: Kysely<Database>, email: string): Promise<Account | undefined> {
  const row = await db
    .selectFrom('accounts')
    .select(['id', 'email', 'plan', 'created_at'])
    .where('email', '=', normaliseEmail(email))
    .executeTakeFirst();
  return row && { id: row.id, email: row.email, plan: toAccountPlan(row.plan), createdAt: row.created_at };
}

/** The secret that signs the account's outbound webhooks. Kept out of `Account` so it
 * never rides along into logs or responses by accident; ask for it explicitly. */
export async function getWebhookSecret(db: Kysely<Database>, accountId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('accounts')
    .select('webhook_secret')
    .where('id', '=', accountId)
    .executeTakeFirst();
  return row?.webhook_secret;
}

/** Replaces the account's webhook secret (a leaked one stops working at once); returns the new one. */
export async function rotateWebhookSecret(db: Kysely<Database>, accountId: string): Promise<string> {
  const secret = `whsec_${randomBase62(24)}`;
  await db.updateTable('accounts').set({ webhook_secret: secret }).where('id', '=', accountId).execute();
  return secret;
}

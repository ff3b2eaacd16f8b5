import { parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import { ACCOUNT_PLANS, isAccountPlan } from '../billing/plans.js';
import { loadConfig } from '../config.js';
import {
  ensureAccount,
  findAccountByEmail,
  getWebhookSecret,
  rotateWebhookSecret,
} from '../domain/accounts.js';
import { createKey, revokeKey } from '../domain/api-keys.js';
import { selfDb } from '../domain/sessions.js';
import { TERMS_VERSION } from '../domain/terms.js';
import { ApiError } from '../kernel/api-error.js';
import { migrateToLatest, openDatabase } from '../store/db.js';
import type { Database } from '../store/schema.js';
import { type CliIo, EXIT_FAILED, EXIT_OK, EXIT_USAGE, isParseArgsError } from './io.js';

export const ADMIN_USAGE = `Usage:
  pdfedit admin create-key --email EMAIL --plan PLAN [--mode live|test]
      Create an API key (mode live by default), creating the account if needed or
      moving it to PLAN (${ACCOUNT_PLANS.join(', ')}). The key is the last line of output.
  pdfedit admin revoke-key KEY_OR_ID
      Revoke a key, given as the key itself or its key_… id.
  pdfedit admin webhook-secret --email EMAIL [--rotate]
      Print the secret that signs the account's job webhooks (last line of output);
      --rotate replaces it first (deliveries from then on are signed with the new one).
  pdfedit admin accept-terms --email EMAIL
      Record that the account accepted the document-integrity terms (version
      ${TERMS_VERSION}); on Growth and Scale it may then send watermark "off" on
      flagged documents (SPEC rule 12).
  pdfedit admin release-hold --email EMAIL
      Lift the hold a payment dispute put on the account (its keys answer 402 while it
      holds); prints the reason that was lifted.

Reads DATA_DIR / DATABASE_URL like the server; migrates the database if needed.`;

/** A wrong command line: reported with the usage, exit 2. */
class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Opens the configured database without the server, migrated, for one operation. */
async function withDatabase<T>(io: CliIo, fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  const { db, close } = openDatabase(loadConfig(io.env).databaseUrl);
  try {
    await migrateToLatest(db);
    return await fn(db);
  } finally {
    await close();
  }
}

/** Shows which key was meant without printing a secret back: ids as they are, keys by prefix. */
function describeKey(keyOrId: string): string {
  return keyOrId.startsWith('key_') ? keyOrId : `${keyOrId.slice(0, 12)}…`;
}

async function createKeyCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      email: { type: 'string' },
      plan: { type: 'string' },
      mode: { type: 'string', default: 'live' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (!values.email) throw new UsageError('create-key needs --email');
  if (!values.plan || !isAccountPlan(values.plan)) {
    throw new UsageError(`create-key needs --plan, one of ${ACCOUNT_PLANS.join(', ')}`);
  }
  const mode = values.mode;
  if (mode !== 'live' && mode !== 'test') throw new UsageError('--mode must be live or test');
  const plan = values.plan;
  const email = values.email;
  return withDatabase(io, async (db) => {
    const account = await ensureAccount(db, email, plan);
    const created = await createKey(db, account.id, mode);
    io.out(`account ${account.id} ${account.email} (plan ${account.plan})`);
    io.out(`key ${created.keyId} (${mode}, prefix ${created.prefix}); shown once, store it now:`);
    // Last line, nothing after it: scripts take the key with `tail -n 1`.
    io.out(created.key);
    return EXIT_OK;
  });
}

async function revokeKeyCommand(args: string[], io: CliIo): Promise<number> {
  const { positionals } = parseArgs({ args, options: {}, strict: true, allowPositionals: true });
  const [keyOrId, ...extra] = positionals;
  if (!keyOrId || extra.length > 0) throw new UsageError('revoke-key takes exactly one KEY_OR_ID');
  return withDatabase(io, async (db) => {
    if (await revokeKey(db, keyOrId)) {
      io.out(`revoked ${describeKey(keyOrId)}`);
      return EXIT_OK;
    }
    io.err(`pdfedit: no active key matches ${describeKey(keyOrId)} (unknown, or revoked already)`);
    return EXIT_FAILED;
  });
}

async function webhookSecretCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { email: { type: 'string' }, rotate: { type: 'boolean', default: false } },
    strict: true,
  });
  const email = values.email;
  if (!email) throw new UsageError('webhook-secret needs --email');
  return withDatabase(io, async (db) => {
    const account = await findAccountByEmail(db, email);
    if (account && values.rotate) {
      await rotateWebhookSecret(db, account.id);
      io.out(`rotated the webhook secret of ${account.id}; receivers must use the new one:`);
    }
    const secret = account && (await getWebhookSecret(db, account.id));
    if (!account || !secret) {
      io.err(`pdfedit: no account for ${email}`);
      return EXIT_FAILED;
    }
    io.out(secret);
    return EXIT_OK;
  });
}

async function acceptTermsCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args, options: { email: { type: 'string' } }, strict: true });
  const email = values.email;
  if (!email) throw new UsageError('accept-terms needs --email');
  return withDatabase(io, async (db) => {
    const account = await findAccountByEmail(db, email);
    if (!account) {
      io.err(`pdfedit: no account for ${email}`);
      return EXIT_FAILED;
    }
    const at = Date.now();
    await db
      .updateTable('accounts')
      .set({ terms_accepted_at: at, terms_version: TERMS_VERSION })
      .where('id', '=', account.id)
      .execute();
    io.out(
      `${account.id} ${account.email} accepted the document-integrity terms ${TERMS_VERSION} at ${new Date(at).toISOString()}`,
    );
    return EXIT_OK;
  });
}

async function releaseHoldCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args, options: { email: { type: 'string' } }, strict: true });
  const email = values.email;
  if (!email) throw new UsageError('release-hold needs --email');
  return withDatabase(io, async (db) => {
    const account = await findAccountByEmail(db, email);
    if (!account) {
      io.err(`pdfedit: no account for ${email}`);
      return EXIT_FAILED;
    }
    const row = await selfDb(db)
      .selectFrom('accounts')
      .select('hold_reason')
      .where('id', '=', account.id)
      .executeTakeFirst();
    if (!row?.hold_reason) {
      io.out(`${account.id} ${account.email} has no hold`);
      return EXIT_OK;
    }
    await selfDb(db)
      .updateTable('accounts')
      .set({ hold_reason: null })
      .where('id', '=', account.id)
      .execute();
    io.out(`${account.id} ${account.email} released from hold (${row.hold_reason})`);
    return EXIT_OK;
  });
}

const COMMANDS: Record<string, (args: string[], io: CliIo) => Promise<number>> = {
  'create-key': createKeyCommand,
  'revoke-key': revokeKeyCommand,
  'webhook-secret': webhookSecretCommand,
  'accept-terms': acceptTermsCommand,
  'release-hold': releaseHoldCommand,
};

/** `pdfedit admin …`: returns the exit code. */
export async function runAdmin(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (
    sub === '--help' ||
    sub === '-h' ||
    (sub !== undefined && rest.some((a) => a === '--help' || a === '-h'))
  ) {
    io.out(ADMIN_USAGE);
    return EXIT_OK;
  }
  const command = sub === undefined ? undefined : COMMANDS[sub];
  if (!command) {
    io.err(sub === undefined ? 'pdfedit: admin needs a command' : `pdfedit: unknown admin command "${sub}"`);
    io.err(ADMIN_USAGE);
    return EXIT_USAGE;
  }
  try {
    return await command(rest, io);
  } catch (err) {
    // Wrong command line, or a value the domain refuses (an invalid email): the caller's to fix.
    if (err instanceof UsageError || isParseArgsError(err) || (err instanceof ApiError && err.status < 500)) {
      io.err(`pdfedit: ${err.message}`);
      io.err(ADMIN_USAGE);
      return EXIT_USAGE;
    }
    throw err;
  }
}

import { createHash, randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { clientAddressGroup } from '../billing/client-ip.js';
import { ApiError } from '../kernel/api-error.js';
import type { Principal } from '../kernel/principal.js';
import type { IdempotencyRecordsTable, IdempotencySchema } from '../store/idempotency-schema.js';
import { prepared } from '../store/prepared.js';
import type { Database } from '../store/schema.js';

/**
 * Idempotency for POST /v1/edit and POST /v1/batch (SPEC "POST /v1/edit", Idempotency).
 *
 * Use from a route, after authentication and validation, around everything that does work:
 *
 *   const out = await withIdempotency(
 *     {
 *       db: fastify.db,
 *       scope: idempotencyScope(request.principal, request.ip),
 *       route: 'POST /v1/edit',
 *       key: request.headers['idempotency-key'],   // may be undefined: a key is derived
 *       bodyHash: hashBody(request.body),           // multipart: hashBody({file_sha256, edits, options, password})
 *       leaseMs: 2 * fastify.config.syncTimeoutMs,
 *       now: fastify.config.now,
 *     },
 *     async ({ workId }) => {
 *       // quotaCheck, engine, charge(db, subject, workId, …): workId is stable for this key,
 *       // so even a re-run after a crashed process's lease charges at most once.
 *       return { status: 200, headers: { 'content-type': 'application/json' }, body: result };
 *     },
 *   );
 *   reply.code(out.status).headers(out.headers).send(out.body);  // out.headers has Idempotent-Replayed on replays
 *
 * Rules: same key + same body → the stored response (status, headers, body) with
 * `Idempotent-Replayed: true`; same key + another body → 400 invalid_request; a key over
 * 255 characters → 400; a duplicate while the first runs polls (backoff, up to `waitMs`,
 * default 10 s) and then answers 409 conflict; without a key one is derived from the
 * scope (account and mode, or the keyless client address), the route and the body.
 * Records live 24 h. A record still `running` after its lease (the process died) is taken
 * over by the next request. Only final answers are stored: successes and the client errors
 * that the same body would meet again (400, 403, 413, 422); anything else (402, 404, 429,
 * 5xx…) removes the record so that a retry runs afresh.
 *
 * Race-free on SQLite and PostgreSQL: the primary key (scope, key) admits one insert; every
 * later step is a conditional update on the owner token.
 *
 * `run` may write its final answer itself with `ctx.settle(trx, answer)`, inside the
 * transaction of its own last writes (an edit: the output's row and the charge), so that
 * the answer commits with the work it describes, and with one commit fewer on the way to
 * it. The record is then not written again when `run` returns; a `run` that throws after
 * settling has its answer kept (it is final), like any stored answer.
 */

export const MAX_KEY_LENGTH = 255;
export const RECORD_TTL_MS = 24 * 60 * 60 * 1000;
const STORED_ERROR_STATUSES = new Set([400, 403, 413, 422]);

export interface IdempotentResponse {
  status: number;
  headers: Record<string, string>;
  /** A JSON value, or the bytes of a binary answer (a PDF). */
  body: unknown;
}

/**
 * Sends an answer as the record holds it: a replay keeps its status (a stored 4xx too),
 * headers and body. Routes type their replies per status; a replayed answer is whatever
 * the first request answered, so it goes out through the untyped reply.
 */
export function sendAnswer(reply: { send(payload: unknown): unknown }, answer: IdempotentResponse) {
  const untyped = reply as FastifyReply;
  return untyped.code(answer.status).headers(answer.headers).send(answer.body);
}

export interface IdempotencyOptions {
  db: Kysely<Database>;
  scope: string;
  route: string;
  /** The Idempotency-Key header as received (string, string[] or undefined). */
  key: string | string[] | undefined;
  bodyHash: string;
  /** How long a running record is trusted before another request may take it over. */
  leaseMs: number;
  /** How long a duplicate waits for the first request before 409 (default 10 s). */
  waitMs?: number;
  now?: () => number;
}

type Row = IdempotencyRecordsTable;

/** `<account>:<mode>` for keys, `keyless:<address group>` for anonymous calls. */
export function idempotencyScope(principal: Principal | undefined, clientIp: string): string {
  return principal ? `${principal.accountId}:${principal.mode}` : `keyless:${clientAddressGroup(clientIp)}`;
}

/** JSON with object members sorted, so member order does not change the hash. */
export function canonicalJson(value: unknown): string {
  if (Buffer.isBuffer(value)) return JSON.stringify(createHash('sha256').update(value).digest('hex'));
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function hashBody(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** The key to use: the header's (checked), or one derived from scope, route and body. */
export function resolveKey(
  header: string | string[] | undefined,
  scope: string,
  route: string,
  bodyHash: string,
) {
  if (Array.isArray(header)) throw new ApiError('invalid_request', 'Send the Idempotency-Key header once.');
  if (header === undefined) {
    const derived = createHash('sha256').update(`${scope}\n${route}\n${bodyHash}`).digest('hex');
    return `derived:${derived}`;
  }
  if (header.length === 0 || header.length > MAX_KEY_LENGTH) {
    throw new ApiError('invalid_request', `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters long.`, {
      hint: 'Use a UUID or another unique string of at most 255 characters.',
    });
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(header)) {
    throw new ApiError('invalid_request', 'Idempotency-Key must not contain control characters.');
  }
  return `key:${header}`;
}

const db = (o: IdempotencyOptions) => o.db.withTables<IdempotencySchema>();

function workIdOf(scope: string, key: string, createdAt: number): string {
  return `idem_${createHash('sha256').update(`${scope}\n${key}\n${createdAt}`).digest('hex').slice(0, 32)}`;
}

function encode(res: IdempotentResponse): Pick<Row, 'response_body' | 'response_encoding'> {
  if (Buffer.isBuffer(res.body))
    return { response_body: res.body.toString('base64'), response_encoding: 'base64' };
  return { response_body: JSON.stringify(res.body ?? null), response_encoding: 'json' };
}

function replay(row: Row): IdempotentResponse & { replayed: true } {
  const body =
    row.response_encoding === 'base64'
      ? Buffer.from(row.response_body ?? '', 'base64')
      : JSON.parse(row.response_body ?? 'null');
  const headers = JSON.parse(row.response_headers ?? '{}') as Record<string, string>;
  return {
    status: row.response_status ?? 200,
    headers: { ...headers, 'Idempotent-Replayed': 'true' },
    body,
    replayed: true,
  };
}

/** What `run` is given: the work id to charge under, and a way to write its answer in its
 * own transaction (see the module comment). */
export interface IdempotentRun {
  workId: string;
  settle(trx: Transaction<Database>, res: IdempotentResponse): Promise<void>;
}

type Claim = { kind: 'owner'; owner: string; createdAt: number } | { kind: 'existing'; row: Row };

/** claim's insert and finish's update, compiled once (src/store/prepared.ts): every
 * request that writes runs both. */
const claimInsert = prepared<{
  scope: string;
  key: string;
  route: string;
  body_hash: string;
  state: 'running';
  owner: string;
  lease_until: number;
  none: null;
  created_at: number;
  expires_at: number;
}>(
  ['scope', 'key', 'route', 'body_hash', 'state', 'owner', 'lease_until', 'none', 'created_at', 'expires_at'],
  (dbx, v) =>
    dbx
      .withTables<IdempotencySchema>()
      .insertInto('idempotency_records')
      .values({
        scope: v.scope,
        key: v.key,
        route: v.route,
        body_hash: v.body_hash,
        state: v.state,
        owner: v.owner,
        lease_until: v.lease_until,
        response_status: v.none,
        response_headers: v.none,
        response_body: v.none,
        response_encoding: v.none,
        created_at: v.created_at,
        expires_at: v.expires_at,
      })
      .onConflict((oc) => oc.columns(['scope', 'key']).doNothing()),
);

const finishUpdate = prepared<{
  state: 'done';
  response_status: number;
  response_headers: string;
  response_body: Row['response_body'];
  response_encoding: Row['response_encoding'];
  scope: string;
  key: string;
  owner: string;
}>(
  [
    'state',
    'response_status',
    'response_headers',
    'response_body',
    'response_encoding',
    'scope',
    'key',
    'owner',
  ],
  (dbx, v) =>
    dbx
      .withTables<IdempotencySchema>()
      .updateTable('idempotency_records')
      .set({
        state: v.state,
        response_status: v.response_status,
        response_headers: v.response_headers,
        response_body: v.response_body,
        response_encoding: v.response_encoding,
      })
      .where('scope', '=', v.scope)
      .where('key', '=', v.key)
      .where('owner', '=', v.owner),
);

/** Inserts the running record, or takes over an expired or abandoned one, or reports the
 * record that is there. Exactly one concurrent caller can get `owner`. */
async function claim(o: IdempotencyOptions, key: string, now: number): Promise<Claim> {
  const owner = randomBytes(12).toString('hex');
  const lease = now + o.leaseMs;
  // The insert first: a new key (every request without an Idempotency-Key whose body was
  // not sent before) is claimed in one statement.
  const inserted = await claimInsert.run(o.db, {
    scope: o.scope,
    key,
    route: o.route,
    body_hash: o.bodyHash,
    state: 'running',
    owner,
    lease_until: lease,
    none: null,
    created_at: now,
    expires_at: now + RECORD_TTL_MS,
  });
  if (inserted > 0) return { kind: 'owner', owner, createdAt: now };
  const row = await db(o)
    .selectFrom('idempotency_records')
    .selectAll()
    .where('scope', '=', o.scope)
    .where('key', '=', key)
    .executeTakeFirst();
  if (!row) return claim(o, key, now); // removed in between: try again
  if (row.expires_at <= now) {
    // A record past its 24 hours is as good as absent: removed, and the insert tried again.
    await db(o)
      .deleteFrom('idempotency_records')
      .where('scope', '=', o.scope)
      .where('key', '=', key)
      .where('expires_at', '<=', now)
      .execute();
    return claim(o, key, now);
  }
  if (row.route !== o.route || row.body_hash !== o.bodyHash) return { kind: 'existing', row };
  if (row.state === 'running' && row.lease_until <= now) {
    // The owner's lease ran out (crashed or stuck process): the first to swap the owner wins.
    const taken = await db(o)
      .updateTable('idempotency_records')
      .set({ owner, lease_until: lease })
      .where('scope', '=', o.scope)
      .where('key', '=', key)
      .where('state', '=', 'running')
      .where('owner', '=', row.owner)
      .executeTakeFirst();
    if (taken.numUpdatedRows > 0n) return { kind: 'owner', owner, createdAt: row.created_at };
  }
  return { kind: 'existing', row };
}

async function finish(
  o: IdempotencyOptions,
  key: string,
  owner: string,
  res: IdempotentResponse,
  dbx: Kysely<Database> | Transaction<Database> = o.db,
): Promise<void> {
  const body = encode(res);
  await finishUpdate.run(dbx, {
    state: 'done',
    response_status: res.status,
    response_headers: JSON.stringify(res.headers),
    response_body: body.response_body,
    response_encoding: body.response_encoding,
    scope: o.scope,
    key,
    owner,
  });
}

async function release(o: IdempotencyOptions, key: string, owner: string): Promise<void> {
  await db(o)
    .deleteFrom('idempotency_records')
    .where('scope', '=', o.scope)
    .where('key', '=', key)
    .where('owner', '=', owner)
    .where('state', '=', 'running')
    .execute();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Runs `run` at most once per key and scope (see the module comment for the rules). */
export async function withIdempotency(
  o: IdempotencyOptions,
  run: (ctx: IdempotentRun) => Promise<IdempotentResponse>,
): Promise<IdempotentResponse & { replayed: boolean }> {
  const now = o.now ?? Date.now;
  const key = resolveKey(o.key, o.scope, o.route, o.bodyHash);
  const waitUntil = Date.now() + (o.waitMs ?? 10_000);
  let delay = 25;
  for (;;) {
    const c = await claim(o, key, now());
    if (c.kind === 'owner') {
      // Field by field, not `{ ...res, replayed }`: such a literal left garbage in V8's old
      // generation on every call (issue 18 item 6; see src/billing/meter.ts chargeIn).
      const res = await execute(o, key, c.owner, c.createdAt, run);
      return { status: res.status, headers: res.headers, body: res.body, replayed: false };
    }
    const row = c.row;
    if (row.route !== o.route || row.body_hash !== o.bodyHash) {
      throw new ApiError('invalid_request', 'This Idempotency-Key was used with a different request body.', {
        hint: 'Use a new Idempotency-Key for a different request; keys are kept 24 hours.',
      });
    }
    if (row.state === 'done') return replay(row);
    if (Date.now() >= waitUntil) {
      throw new ApiError('conflict', 'A request with this Idempotency-Key is still running.', {
        headers: { 'Retry-After': '1' },
      });
    }
    await sleep(Math.min(delay, Math.max(1, waitUntil - Date.now())));
    delay = Math.min(delay * 2, 1_000);
  }
}

async function execute(
  o: IdempotencyOptions,
  key: string,
  owner: string,
  createdAt: number,
  run: (ctx: IdempotentRun) => Promise<IdempotentResponse>,
): Promise<IdempotentResponse> {
  let res: IdempotentResponse;
  // Set once run's own transaction wrote the answer (it commits or throws out of run).
  let settled = false;
  const settle = async (trx: Transaction<Database>, answer: IdempotentResponse) => {
    await finish(o, key, owner, answer, trx);
    settled = true;
  };
  try {
    res = await run({ workId: workIdOf(o.scope, key, createdAt), settle });
  } catch (err) {
    // After settle: a transaction that wrote the answer and then failed rolled it back (the
    // record is still running, and released for a retry); one that committed it left a
    // final answer, which release (running records only) leaves as it is.
    if (!settled && err instanceof ApiError && STORED_ERROR_STATUSES.has(err.status)) {
      await finish(o, key, owner, { status: err.status, headers: err.headers ?? {}, body: err.toBody() });
    } else {
      await release(o, key, owner).catch(() => {});
    }
    throw err;
  }
  if (res.status >= 500 || (res.status >= 400 && !STORED_ERROR_STATUSES.has(res.status))) {
    await release(o, key, owner);
  } else if (!settled) {
    await finish(o, key, owner, res);
  }
  return res;
}

/** Retention: removes records past their 24 hours; returns how many. */
export async function sweepIdempotencyRecords(
  dbx: Kysely<Database>,
  now: number = Date.now(),
): Promise<number> {
  const r = await dbx
    .withTables<IdempotencySchema>()
    .deleteFrom('idempotency_records')
    .where('expires_at', '<=', now)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { Agent, request } from 'undici';
import { randomBase62 } from '../kernel/random-token.js';
import type { JobsSchema } from '../store/jobs-schema.js';
import type { Database } from '../store/schema.js';
import { isForbiddenAddress } from './address-policy.js';
import { checkUrl, guardedLookup } from './safe-fetch.js';

/**
 * Outbound job webhooks (SPEC "Events"): `job.done` POSTed to `options.webhook_url`.
 *
 * Signatures, both over the exact bytes sent:
 *   X-Signature: hex HMAC-SHA256(secret, body)                          (SPEC)
 *   webhook-id: msg_…  webhook-timestamp: Unix seconds
 *   webhook-signature: v1,<hex HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>
 * The second form lets a receiver refuse replays: reject a timestamp older than a few
 * minutes and remember ids it has seen. Every attempt carries the same id and body.
 *
 * Deliveries are rows (webhook_deliveries), so a restart loses none: attempt at once,
 * then after 1, 5 and 30 minutes on a non-2xx answer, a redirect (never followed) or a
 * time-out; then given up. Any process may deliver; a lease keeps it to one at a time.
 * The receiver gets no power over us: connections follow the address policy of
 * safe-fetch, the exchange has one deadline, and at most 4 KB of the answer is read.
 */

/** Delays after the 1st, 2nd and 3rd failed attempt (SPEC: 1, 5 and 30 minutes). */
export const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000] as const;
const MAX_ANSWER_BYTES = 4096;

type Db = Kysely<Database> | Transaction<Database>;
const whDb = (db: Db) => db.withTables<JobsSchema>();

export interface SignedHeaders {
  'content-type': string;
  'x-signature': string;
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function signWebhook(secret: string, id: string, timestampSec: number, body: string): SignedHeaders {
  const hmac = (data: string) => createHmac('sha256', secret).update(data).digest('hex');
  return {
    'content-type': 'application/json',
    'x-signature': hmac(body),
    'webhook-id': id,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': `v1,${hmac(`${id}.${timestampSec}.${body}`)}`,
  };
}

/** Queues the `job.done` event of a finished job; once per job (unique job_id). */
export async function enqueueJobDone(
  db: Db,
  job: { id: string; accountId: string; url: string },
  result: Record<string, unknown>,
  now: number,
): Promise<void> {
  const body = JSON.stringify({ ...result, event: 'job.done', job_id: job.id });
  await whDb(db)
    .insertInto('webhook_deliveries')
    .values({
      id: `msg_${randomBase62(16)}`,
      job_id: job.id,
      account_id: job.accountId,
      url: job.url,
      body,
      state: 'pending',
      attempts: 0,
      next_attempt_at: now,
      owner: null,
      lease_until: 0,
      last_status: null,
      last_error: null,
      created_at: now,
    })
    .onConflict((oc) => oc.column('job_id').doNothing())
    .execute();
}

export interface AttemptResult {
  ok: boolean;
  status: number | null;
  error: string | null;
}

/** One POST, never throwing: the outcome is data for the retry schedule. */
export async function postOnce(
  url: string,
  headers: SignedHeaders,
  body: string,
  opts: { timeoutMs: number; allowPrivate: boolean },
): Promise<AttemptResult> {
  const forbidden = (ip: string) => isForbiddenAddress(ip, opts.allowPrivate);
  const agent = new Agent({ connect: { lookup: guardedLookup(forbidden) as never }, pipelining: 0 });
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), opts.timeoutMs);
  try {
    const target = checkUrl(url, forbidden);
    const res = await request(target, {
      method: 'POST',
      dispatcher: agent,
      signal: controller.signal,
      headers: { ...headers, 'user-agent': 'pdfedit-webhook/1' },
      body,
    });
    // Read a little (some servers wait for the client to drain), then hang up.
    let read = 0;
    try {
      for await (const chunk of res.body) {
        read += (chunk as Buffer).length;
        if (read >= MAX_ANSWER_BYTES) break;
      }
    } catch {
      // The answer's status is what counts; a broken body after it changes nothing.
    }
    res.body.on('error', () => {});
    res.body.destroy();
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    return { ok, status: res.statusCode, error: ok ? null : `HTTP ${res.statusCode}` };
  } catch (err) {
    const message = controller.signal.aborted
      ? `no answer within ${opts.timeoutMs} ms`
      : err instanceof Error
        ? err.message
        : String(err);
    return { ok: false, status: null, error: message.slice(0, 500) };
  } finally {
    clearTimeout(timer);
    agent.destroy().catch(() => {});
  }
}

export interface DispatcherOptions {
  db: Kysely<Database>;
  now: () => number;
  timeoutMs: number;
  pollMs: number;
  allowPrivate: boolean;
  log: FastifyBaseLogger;
  /**
   * The account's signing secret (domain/accounts getWebhookSecret), handed in so this
   * delivery code does not reach into the domain layer that itself uses net/.
   */
  secretOf: (accountId: string) => Promise<string | undefined>;
}

/** Sends due deliveries; one per process, started with the service and `pdfedit worker`. */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private readonly token = randomBytes(12).toString('hex');

  constructor(private readonly o: DispatcherOptions) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.deliverDue().catch((err: unknown) => this.o.log.error({ err }, 'webhook dispatch failed'));
    }, this.o.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }

  /** Delivers every due attempt now (the poll calls it; tests call it after moving the clock). */
  deliverDue(): Promise<number> {
    this.running ??= this.sweep().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async sweep(): Promise<number> {
    let sent = 0;
    for (;;) {
      const now = this.o.now();
      const due = await whDb(this.o.db)
        .selectFrom('webhook_deliveries')
        .select(['id'])
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where('lease_until', '<=', now)
        .orderBy('next_attempt_at')
        .limit(20)
        .execute();
      if (due.length === 0) return sent;
      await Promise.all(
        due.map(async ({ id }) => {
          if (await this.attempt(id, now)) sent++;
        }),
      );
    }
  }

  /** Claims one delivery (a lease longer than the time-out), POSTs it and records the outcome. */
  private async attempt(id: string, now: number): Promise<boolean> {
    const claimed = await whDb(this.o.db)
      .updateTable('webhook_deliveries')
      .set({ owner: this.token, lease_until: now + this.o.timeoutMs * 2 + 5_000 })
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .where('lease_until', '<=', now)
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) return false;
    const row = await whDb(this.o.db)
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const secret = await this.o.secretOf(row.account_id);
    const result: AttemptResult = secret
      ? await postOnce(row.url, signWebhook(secret, row.id, Math.floor(now / 1000), row.body), row.body, {
          timeoutMs: this.o.timeoutMs,
          allowPrivate: this.o.allowPrivate,
        })
      : { ok: false, status: null, error: 'the account no longer exists' };
    const attempts = row.attempts + 1;
    const delay = RETRY_DELAYS_MS[attempts - 1];
    const state = result.ok ? 'delivered' : delay === undefined || !secret ? 'failed' : 'pending';
    // Scheduled from the attempt's start on the service clock: 1, 5, 30 minutes later.
    await whDb(this.o.db)
      .updateTable('webhook_deliveries')
      .set({
        state,
        attempts,
        next_attempt_at: state === 'pending' ? now + (delay ?? 0) : row.next_attempt_at,
        owner: null,
        lease_until: 0,
        last_status: result.status,
        last_error: result.error,
      })
      .where('id', '=', id)
      .where('owner', '=', this.token)
      .execute();
    if (!result.ok)
      this.o.log.warn(
        { delivery: id, job: row.job_id, attempts, state, error: result.error },
        'webhook not delivered',
      );
    return true;
  }
}

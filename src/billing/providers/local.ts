import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { randomBase62 } from '../../kernel/random-token.js';
import type { Database } from '../../store/schema.js';
import type { SelfServiceSchema } from '../../store/self-service-schema.js';
import {
  type CheckoutFor,
  type CreatedCheckout,
  type PaymentProvider,
  PRICE_CENTS,
  type ProviderEvent,
} from './types.js';

export const LOCAL_SIGNATURE_HEADER = 'x-pdfedit-signature';
/** Callbacks older or newer than this are refused (as Stripe's default tolerance). */
export const LOCAL_TOLERANCE_S = 300;
const CHECKOUT_TTL_MS = 60 * 60 * 1000;
/** A local subscription period: 30 days. */
export const LOCAL_PERIOD_MS = 30 * 24 * 60 * 60 * 1000;

/** The key that signs local callbacks: derived from TOKEN_SECRET, never the secret itself. */
export function localSigningKey(tokenSecret: Buffer): Buffer {
  return createHmac('sha256', tokenSecret).update('pdfedit local billing callbacks').digest();
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`, the shape Stripe uses. */
export function signLocal(key: Buffer, body: string, t: number): string {
  const mac = createHmac('sha256', key).update(`${t}.${body}`).digest('hex');
  return `t=${t},v1=${mac}`;
}

export function verifyLocal(key: Buffer, raw: Buffer, header: string | undefined, nowS: number): boolean {
  if (!header) return false;
  const parts = new Map(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1') ?? '';
  if (!Number.isInteger(t) || Math.abs(nowS - t) > LOCAL_TOLERANCE_S || !/^[0-9a-f]{64}$/.test(v1))
    return false;
  const want = createHmac('sha256', key).update(`${t}.`).update(raw).digest();
  return timingSafeEqual(want, Buffer.from(v1, 'hex'));
}

export function localEvent(type: string, object: Record<string, unknown>, nowMs: number): ProviderEvent {
  return { id: `evt_local_${randomBase62(16)}`, type, created: Math.floor(nowMs / 1000), data: { object } };
}

/**
 * The local provider (embedded default): checkouts are rows of this service, paid on a page
 * it serves (routes/billing.ts), which then posts the signed events below to
 * /v1/billing/webhook/local, the same path Stripe's callbacks take.
 */
export function localProvider(db: Kysely<Database>, publicBaseUrl: string, key: Buffer): PaymentProvider {
  const sdb = db.withTables<SelfServiceSchema>();
  return {
    name: 'local',
    async createCheckout(input: CheckoutFor, now: number): Promise<CreatedCheckout> {
      const id = `cs_local_${randomBase62(16)}`;
      const expiresAt = now + CHECKOUT_TTL_MS;
      await sdb
        .insertInto('checkouts')
        .values({
          id,
          account_id: input.accountId,
          provider: 'local',
          kind: input.kind,
          item: input.item,
          created_at: now,
          expires_at: expiresAt,
          completed_at: null,
        })
        .execute();
      return { id, url: `${publicBaseUrl}/billing/local/checkout/${id}`, expiresAt };
    },
    verify(raw, headers, now) {
      const h = headers[LOCAL_SIGNATURE_HEADER];
      if (!verifyLocal(key, raw, typeof h === 'string' ? h : undefined, Math.floor(now / 1000)))
        return undefined;
      return parseEvent(raw);
    },
    async cancelAtPeriodEnd() {
      // Nothing outside: the page posts the customer.subscription.updated event itself.
    },
    async cancelNow() {},
    async chargeOverage() {
      return null;
    },
  };
}

/** The events a paid local checkout produces. */
export function localCheckoutEvents(
  checkout: { id: string; account_id: string; kind: 'plan' | 'pack'; item: string },
  customer: string,
  nowMs: number,
): ProviderEvent[] {
  const cents = PRICE_CENTS[checkout.item] ?? 0;
  const meta = { account_id: checkout.account_id, kind: checkout.kind, item: checkout.item };
  if (checkout.kind === 'pack') {
    return [
      localEvent(
        'checkout.session.completed',
        {
          id: checkout.id,
          object: 'checkout.session',
          mode: 'payment',
          client_reference_id: checkout.account_id,
          customer,
          payment_intent: `pi_local_${randomBase62(12)}`,
          amount_total: cents,
          metadata: meta,
        },
        nowMs,
      ),
    ];
  }
  const sub = `sub_local_${randomBase62(12)}`;
  const end = Math.floor((nowMs + LOCAL_PERIOD_MS) / 1000);
  return [
    localEvent(
      'checkout.session.completed',
      {
        id: checkout.id,
        object: 'checkout.session',
        mode: 'subscription',
        client_reference_id: checkout.account_id,
        customer,
        subscription: sub,
        amount_total: cents,
        metadata: meta,
      },
      nowMs,
    ),
    localEvent(
      'invoice.paid',
      {
        id: `in_local_${randomBase62(12)}`,
        customer,
        subscription: sub,
        amount_paid: cents,
        period_end: end,
      },
      nowMs,
    ),
  ];
}

export function parseEvent(raw: Buffer): ProviderEvent | undefined {
  let v: unknown;
  try {
    v = JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const e = v as Record<string, unknown>;
  const data = e.data as Record<string, unknown> | undefined;
  if (
    typeof e.id !== 'string' ||
    typeof e.type !== 'string' ||
    typeof e.created !== 'number' ||
    typeof data?.object !== 'object' ||
    data.object === null
  )
    return undefined;
  return e as unknown as ProviderEvent;
}

import type { Kysely, Transaction } from 'kysely';
import { randomBase62 } from '../kernel/random-token.js';
import type { BillingSchema } from '../store/billing-schema.js';
import type { Database } from '../store/schema.js';
import type { SelfServiceSchema } from '../store/self-service-schema.js';
import { CREDIT_PACKS, isAccountPlan, isCreditPack } from './plans.js';
import { overageCents, type PaymentProvider, type ProviderEvent } from './providers/types.js';

type All = Database & BillingSchema & SelfServiceSchema;
type Trx = Transaction<All>;
const allDb = (db: Kysely<Database>) => db.withTables<BillingSchema>().withTables<SelfServiceSchema>();

export type ApplyOutcome = 'applied' | 'duplicate' | 'ignored';

export interface ApplyResult {
  outcome: ApplyOutcome;
  /** A subscription of the account that a new one replaced (a plan change through a new
   * checkout): the caller cancels it with the provider, so the account pays for one plan. */
  replaced?: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};

/** The account an event object names: its metadata, its checkout reference, its
 * customer, or the pack payment it refers to. */
async function accountOf(trx: Trx, o: Record<string, unknown>): Promise<string | undefined> {
  const candidates = [str(obj(o.metadata).account_id), str(o.client_reference_id)];
  for (const id of candidates) {
    if (!id) continue;
    const row = await trx.selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst();
    if (row) return row.id;
  }
  const customer = str(o.customer);
  if (customer) {
    const row = await trx
      .selectFrom('accounts')
      .select('id')
      .where('provider_customer', '=', customer)
      .executeTakeFirst();
    if (row) return row.id;
  }
  const pi = str(o.payment_intent);
  if (pi) {
    const row = await trx
      .selectFrom('pack_payments')
      .select('account_id')
      .where('payment_ref', '=', pi)
      .executeTakeFirst();
    if (row) return row.account_id;
  }
  return undefined;
}

/** Credit pages still unused (granted minus taken back minus used in live mode). */
async function creditsLeft(trx: Trx, accountId: string): Promise<number> {
  const g = await trx
    .selectFrom('credit_grants')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('pages'), eb.lit(0)).as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  const u = await trx
    .selectFrom('usage_charges')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('credit_pages'), eb.lit(0)).as('n'))
    .where('subject', '=', accountId)
    .where('mode', '=', 'live')
    .executeTakeFirstOrThrow();
  return Math.max(0, Number(g.n) - Number(u.n));
}

/** A paid plan named by a subscription object: its price's lookup key `pdfedit_<plan>`,
 * else the metadata the checkout put on it. */
function planOfSubscription(o: Record<string, unknown>): string | undefined {
  const items = obj(o.items).data;
  const first = Array.isArray(items) ? obj(items[0]) : {};
  const lookup = str(obj(first.price).lookup_key);
  const fromLookup = lookup?.startsWith('pdfedit_') ? lookup.slice('pdfedit_'.length) : undefined;
  const plan = fromLookup ?? str(obj(o.metadata).plan) ?? str(obj(o.metadata).item);
  return plan && isAccountPlan(plan) && plan !== 'free' ? plan : undefined;
}

function periodEndOf(o: Record<string, unknown>): number | undefined {
  const items = obj(o.items).data;
  const first = Array.isArray(items) ? obj(items[0]) : {};
  const lines = obj(o.lines).data;
  const line = Array.isArray(lines) ? obj(lines[0]) : {};
  const s =
    num(o.current_period_end) ??
    num(first.current_period_end) ??
    num(obj(line.period).end) ??
    num(o.period_end);
  return s === undefined ? undefined : s * 1000;
}

/**
 * Applies one verified provider event, once: the event id is recorded in the same
 * transaction as its effects, so a redelivery (or two deliveries racing) changes nothing
 * more. Subscription state carries the event's `created` time: an older event arriving
 * after a newer one does not undo it. Unknown events are acknowledged and ignored.
 */
export async function applyProviderEvent(
  db: Kysely<Database>,
  provider: string,
  event: ProviderEvent,
  now: number,
): Promise<ApplyResult> {
  let replaced: string | undefined;
  const outcome = await allDb(db)
    .transaction()
    .execute(async (trx): Promise<ApplyOutcome> => {
      const o = obj(event.data.object);
      const accountId = await accountOf(trx, o);
      const inserted = await trx
        .insertInto('billing_events')
        .values({
          provider,
          event_id: event.id,
          type: event.type,
          account_id: accountId ?? null,
          applied_at: now,
        })
        .onConflict((oc) => oc.columns(['provider', 'event_id']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return 'duplicate';
      if (!accountId) return 'ignored';
      const at = event.created * 1000;
      // Subscription state: only when this event is not older than the last one applied.
      const newer = async () => {
        const r = await trx
          .updateTable('accounts')
          .set({ plan_event_at: at })
          .where('id', '=', accountId)
          .where((eb) => eb.or([eb('plan_event_at', 'is', null), eb('plan_event_at', '<=', at)]))
          .executeTakeFirst();
        return r.numUpdatedRows > 0n;
      };
      const customer = str(o.customer);
      if (customer) {
        await trx
          .updateTable('accounts')
          .set({ provider_customer: customer })
          .where('id', '=', accountId)
          .where('provider_customer', 'is', null)
          .execute();
      }
      const current = (
        await trx
          .selectFrom('accounts')
          .select('provider_subscription')
          .where('id', '=', accountId)
          .executeTakeFirstOrThrow()
      ).provider_subscription;
      switch (event.type) {
        case 'checkout.session.completed': {
          const meta = obj(o.metadata);
          const kind = str(meta.kind);
          const item = str(meta.item) ?? '';
          const sessionId = str(o.id);
          if (sessionId)
            await trx
              .updateTable('checkouts')
              .set({ completed_at: now })
              .where('id', '=', sessionId)
              .execute();
          if (kind === 'pack' && isCreditPack(item)) {
            await trx
              .insertInto('credit_grants')
              .values({
                id: `cred_${randomBase62(12)}`,
                account_id: accountId,
                pack: item,
                pages: CREDIT_PACKS[item].pages,
                reference: `${provider}:${event.id}`,
                created_at: now,
              })
              .execute();
            const pi = str(o.payment_intent);
            if (pi) {
              await trx
                .insertInto('pack_payments')
                .values({
                  payment_ref: pi,
                  account_id: accountId,
                  pack: item,
                  amount_cents: num(o.amount_total) ?? 0,
                  created_at: now,
                })
                .onConflict((oc) => oc.column('payment_ref').doNothing())
                .execute();
            }
            return 'applied';
          }
          if (kind === 'plan' && isAccountPlan(item) && item !== 'free') {
            const sub = str(o.subscription) ?? null;
            if (await newer()) {
              await trx
                .updateTable('accounts')
                .set({ plan: item, plan_at_period_end: null, provider_subscription: sub ?? current })
                .where('id', '=', accountId)
                .execute();
              if (current && sub && current !== sub) replaced = current;
            } else if (!current && sub) {
              await trx
                .updateTable('accounts')
                .set({ provider_subscription: sub })
                .where('id', '=', accountId)
                .execute();
            }
            return 'applied';
          }
          return 'ignored';
        }
        case 'invoice.paid': {
          // A renewal (or the first invoice): the paid period now ends later. Its payment is
          // remembered so a dispute of it finds the account.
          const pi = str(o.payment_intent);
          if (pi)
            await trx
              .insertInto('pack_payments')
              .values({
                payment_ref: pi,
                account_id: accountId,
                pack: 'plan',
                amount_cents: num(o.amount_paid) ?? 0,
                created_at: now,
              })
              .onConflict((oc) => oc.column('payment_ref').doNothing())
              .execute();
          const end = periodEndOf(o);
          if (end !== undefined)
            await trx
              .updateTable('accounts')
              .set({ period_end: end })
              .where('id', '=', accountId)
              .where((eb) => eb.or([eb('period_end', 'is', null), eb('period_end', '<', end)]))
              .execute();
          return 'applied';
        }
        case 'customer.subscription.created':
        case 'customer.subscription.updated': {
          const subId = str(o.id);
          const live =
            o.cancel_at_period_end !== true &&
            (o.status === undefined || o.status === 'active' || o.status === 'trialing');
          // Another subscription than the account's: it takes over only when it is live
          // (a plan change through a new checkout); news of a replaced one changes nothing.
          if (current && subId && current !== subId && !live) return 'applied';
          if (!(await newer())) return 'applied';
          if (current && subId && current !== subId) replaced = current;
          const plan = planOfSubscription(o);
          const end = periodEndOf(o);
          const set: Record<string, unknown> = { provider_subscription: str(o.id) ?? null };
          if (end !== undefined) set.period_end = end;
          if (o.cancel_at_period_end === true) set.plan_at_period_end = 'free';
          else {
            set.plan_at_period_end = null;
            if (plan && (o.status === undefined || o.status === 'active' || o.status === 'trialing'))
              set.plan = plan;
          }
          await trx.updateTable('accounts').set(set).where('id', '=', accountId).execute();
          return 'applied';
        }
        case 'customer.subscription.deleted': {
          // The end of a replaced subscription leaves the current plan alone.
          if (current && str(o.id) && current !== str(o.id)) return 'applied';
          if (!(await newer())) return 'applied';
          await trx
            .updateTable('accounts')
            .set({ plan: 'free', plan_at_period_end: null, provider_subscription: null })
            .where('id', '=', accountId)
            .execute();
          return 'applied';
        }
        case 'charge.refunded': {
          const pi = str(o.payment_intent);
          const payment = pi
            ? await trx
                .selectFrom('pack_payments')
                .selectAll()
                .where('payment_ref', '=', pi)
                .executeTakeFirst()
            : undefined;
          if (!payment || !isCreditPack(payment.pack)) return 'applied';
          const amount = num(o.amount) ?? payment.amount_cents;
          const refunded = num(o.amount_refunded) ?? amount;
          const packPages = CREDIT_PACKS[payment.pack].pages;
          const target =
            amount > 0 ? Math.min(packPages, Math.ceil((packPages * refunded) / amount)) : packPages;
          const prefix = `refund:${provider}:${pi}:`;
          const taken = await trx
            .selectFrom('credit_grants')
            .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('pages'), eb.lit(0)).as('n'))
            .where('reference', 'like', `${prefix}%`)
            .executeTakeFirstOrThrow();
          // Credits are taken back, never below what was used already.
          const take = Math.min(Math.max(0, target + Number(taken.n)), await creditsLeft(trx, accountId));
          if (take > 0)
            await trx
              .insertInto('credit_grants')
              .values({
                id: `cred_${randomBase62(12)}`,
                account_id: accountId,
                pack: payment.pack,
                pages: -take,
                reference: `${prefix}${event.id}`,
                created_at: now,
              })
              .execute();
          return 'applied';
        }
        case 'charge.dispute.created': {
          await trx
            .updateTable('accounts')
            .set({ hold_reason: `payment dispute ${str(o.id) ?? event.id}` })
            .where('id', '=', accountId)
            .execute();
          return 'applied';
        }
        default:
          return 'ignored';
      }
    });
  return replaced ? { outcome, replaced } : { outcome };
}

/**
 * Period ends: accounts whose cancelled subscription has run out go back to free. Stripe
 * also sends customer.subscription.deleted then; the local provider has only this.
 */
export async function applyPeriodEnds(db: Kysely<Database>, now: number): Promise<number> {
  const r = await allDb(db)
    .updateTable('accounts')
    .set({ plan: 'free', plan_at_period_end: null, provider_subscription: null })
    .where('plan_at_period_end', '=', 'free')
    .where('period_end', '<=', now)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/**
 * Starter overage, charged once a period has ended: the live overage pages of every
 * account in the previous calendar month (UTC) become one invoice per account and period
 * (unique, so repeated sweeps and several processes charge once). The provider charges it
 * (Stripe: an invoice item on the customer's next invoice); the local provider only
 * records it, and the account page shows it. A provider failure removes the row, so the
 * next sweep tries again. Returns the invoices made now.
 */
export async function invoiceOverage(
  db: Kysely<Database>,
  provider: PaymentProvider,
  now: number,
): Promise<number> {
  const d = new Date(now);
  const prevStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1);
  const period = new Date(prevStart).toISOString().slice(0, 7);
  const sdb = allDb(db);
  const due = await sdb
    .selectFrom('usage_charges')
    .innerJoin('accounts', 'accounts.id', 'usage_charges.subject')
    .select((eb) => [
      'usage_charges.subject as accountId',
      'accounts.provider_customer as customer',
      eb.fn.sum<number>('usage_charges.overage_pages').as('pages'),
    ])
    .where('usage_charges.mode', '=', 'live')
    .where('usage_charges.period', '=', period)
    .groupBy(['usage_charges.subject', 'accounts.provider_customer'])
    .having((eb) => eb.fn.sum('usage_charges.overage_pages'), '>', 0)
    .execute();
  let made = 0;
  for (const row of due) {
    const pages = Number(row.pages);
    const cents = overageCents(pages);
    const id = `inv_${randomBase62(12)}`;
    const inserted = await sdb
      .insertInto('invoices')
      .values({
        id,
        account_id: row.accountId,
        period,
        overage_pages: pages,
        amount_cents: cents,
        provider: provider.name,
        provider_ref: null,
        created_at: now,
      })
      .onConflict((oc) => oc.columns(['account_id', 'period']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) continue;
    try {
      const ref = await provider.chargeOverage(row.customer, row.accountId, period, cents, pages);
      if (ref) await sdb.updateTable('invoices').set({ provider_ref: ref }).where('id', '=', id).execute();
      made++;
    } catch (err) {
      await sdb.deleteFrom('invoices').where('id', '=', id).execute();
      throw err;
    }
  }
  return made;
}

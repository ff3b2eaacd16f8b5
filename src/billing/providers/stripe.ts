import Stripe from 'stripe';
import { PLANS } from '../plans.js';
import {
  type CheckoutFor,
  type CreatedCheckout,
  type PaymentProvider,
  PRICE_CENTS,
  type ProviderEvent,
} from './types.js';

export interface StripeOptions {
  secretKey: string;
  webhookSecret: string | undefined;
  /** Another API base (tests: a stub on loopback); the library's host/port/protocol options. */
  apiBase: string | undefined;
  publicBaseUrl: string;
}

/** The official library, pointed at `apiBase` when given. */
export function stripeClient(opts: Pick<StripeOptions, 'secretKey' | 'apiBase'>): Stripe {
  const config: Stripe.StripeConfig = { maxNetworkRetries: 1, timeout: 20_000 };
  if (opts.apiBase) {
    const u = new URL(opts.apiBase);
    config.host = u.hostname;
    config.port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    config.protocol = u.protocol === 'https:' ? 'https' : 'http';
  }
  return new Stripe(opts.secretKey, config);
}

/**
 * Stripe: Checkout Sessions (a subscription for a plan, a one-time payment for a pack),
 * callbacks verified with STRIPE_WEBHOOK_SECRET over the raw body with the library's
 * default tolerance (300 s).
 */
export function stripeProvider(opts: StripeOptions): PaymentProvider {
  const stripe = stripeClient(opts);
  return {
    name: 'stripe',
    async createCheckout(input: CheckoutFor, now: number): Promise<CreatedCheckout> {
      const meta = { account_id: input.accountId, kind: input.kind, item: input.item };
      const cents = PRICE_CENTS[input.item];
      if (cents === undefined) throw new Error(`no price for ${input.item}`);
      const name = input.kind === 'plan' ? `pdfedit ${input.item} plan` : `pdfedit ${input.item} credit pack`;
      const expiresAt = Math.floor(now / 1000) + 60 * 60;
      const session = await stripe.checkout.sessions.create({
        mode: input.kind === 'plan' ? 'subscription' : 'payment',
        client_reference_id: input.accountId,
        ...(input.customer ? { customer: input.customer } : { customer_email: input.email }),
        line_items: [
          {
            quantity: 1,
            price_data: {
              currency: 'usd',
              unit_amount: cents,
              product_data: { name, metadata: meta },
              ...(input.kind === 'plan' ? { recurring: { interval: 'month' as const } } : {}),
            },
          },
        ],
        metadata: meta,
        ...(input.kind === 'plan'
          ? { subscription_data: { metadata: { ...meta, plan: input.item } } }
          : { payment_intent_data: { metadata: meta } }),
        success_url: `${opts.publicBaseUrl}/account?paid=1`,
        cancel_url: `${opts.publicBaseUrl}/account`,
        expires_at: expiresAt,
      });
      if (!session.url) throw new Error('Stripe returned a checkout session without a url');
      return { id: session.id, url: session.url, expiresAt: (session.expires_at ?? expiresAt) * 1000 };
    },
    verify(raw, headers) {
      const sig = headers['stripe-signature'];
      if (!opts.webhookSecret || typeof sig !== 'string') return undefined;
      try {
        const event = stripe.webhooks.constructEvent(raw, sig, opts.webhookSecret);
        return event as unknown as ProviderEvent;
      } catch {
        return undefined;
      }
    },
    async cancelAtPeriodEnd(subscription) {
      await stripe.subscriptions.update(subscription, { cancel_at_period_end: true });
    },
    async cancelNow(subscription) {
      await stripe.subscriptions.cancel(subscription);
    },
    async chargeOverage(customer, accountId, period, cents, pages) {
      if (!customer) return null;
      const item = await stripe.invoiceItems.create({
        customer,
        currency: 'usd',
        amount: cents,
        description: `Overage ${period}: ${pages} pages at ${PLANS.starter.overageUsdPerPage} USD`,
        metadata: { account_id: accountId, period },
      });
      return item.id;
    },
  };
}

/**
 * A payment provider as the service uses it. Events are Stripe-shaped (the names of
 * API-DECISIONS.md "Inbound provider events"), whichever provider sent them, so one
 * applier (checkout-events.ts) handles both.
 */
export interface ProviderEvent {
  id: string;
  type: string;
  /** Unix seconds. */
  created: number;
  data: { object: Record<string, unknown> };
}

export interface CheckoutItem {
  kind: 'plan' | 'pack';
  /** A paid plan (starter, growth, scale) or a pack (try_it, large). */
  item: string;
}

export interface CheckoutFor extends CheckoutItem {
  accountId: string;
  email: string;
  /** The provider's customer of the account, when it has paid before. */
  customer: string | null;
}

export interface CreatedCheckout {
  id: string;
  url: string;
  /** Epoch ms. */
  expiresAt: number;
}

export interface PaymentProvider {
  name: 'local' | 'stripe';
  createCheckout(input: CheckoutFor, now: number): Promise<CreatedCheckout>;
  /** Verifies a callback over its raw body; undefined when unsigned or badly signed. */
  verify(
    rawBody: Buffer,
    headers: Record<string, string | string[] | undefined>,
    now: number,
  ): ProviderEvent | undefined;
  /** Cancels the account's subscription at the end of the paid period. */
  cancelAtPeriodEnd(subscription: string, accountId: string, now: number): Promise<void>;
  /** Ends the subscription now (closing the account). */
  cancelNow(subscription: string, accountId: string, now: number): Promise<void>;
  /** Charges the overage of a period; returns the provider's reference, if any. */
  chargeOverage(
    customer: string | null,
    accountId: string,
    period: string,
    cents: number,
    pages: number,
  ): Promise<string | null>;
}

/** Prices in US cents (the SPEC fixes only the overage; these are this build's list prices). */
export const PRICE_CENTS: Record<string, number> = {
  starter: 2_900,
  growth: 9_900,
  scale: 39_900,
  try_it: 500,
  large: 2_500,
};

/** Starter overage: 0.005 USD a page, i.e. half a cent, rounded up per period. */
export function overageCents(pages: number): number {
  return Math.ceil(pages / 2);
}

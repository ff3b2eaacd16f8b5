import type { Kysely } from 'kysely';
import { ApiError } from '../kernel/api-error.js';
import type { Database } from '../store/schema.js';
import type { SelfServiceSchema } from '../store/self-service-schema.js';
import { isAccountPlan, isCreditPack } from './plans.js';
import type { CheckoutItem, CreatedCheckout, PaymentProvider } from './providers/types.js';

/** `{plan}` or `{pack}` of a checkout request (API or page form) as an item; 400 otherwise. */
export function checkoutItem(body: { plan?: unknown; pack?: unknown }): CheckoutItem {
  const { plan, pack } = body;
  if (typeof plan === 'string' && pack === undefined) {
    if (isAccountPlan(plan) && plan !== 'free') return { kind: 'plan', item: plan };
    throw new ApiError('invalid_request', `Unknown plan "${plan}".`, {
      hint: 'Plans: starter, growth, scale.',
    });
  }
  if (typeof pack === 'string' && plan === undefined) {
    if (isCreditPack(pack)) return { kind: 'pack', item: pack };
    throw new ApiError('invalid_request', `Unknown pack "${pack}".`, { hint: 'Packs: try_it, large.' });
  }
  throw new ApiError('invalid_request', 'Give either "plan" or "pack".');
}

/**
 * A checkout bound to the account (the API and the account page both come here). A plan
 * the account already has is refused: there is nothing to buy.
 */
export async function startCheckout(
  db: Kysely<Database>,
  provider: PaymentProvider,
  accountId: string,
  item: CheckoutItem,
  now: number,
): Promise<CreatedCheckout> {
  const account = await db
    .withTables<SelfServiceSchema>()
    .selectFrom('accounts')
    .select(['email', 'plan', 'provider_customer', 'closed_at'])
    .where('id', '=', accountId)
    .executeTakeFirst();
  if (!account || account.closed_at !== null) throw new ApiError('not_found', 'No such account.');
  if (item.kind === 'plan' && item.item === account.plan) {
    throw new ApiError('invalid_request', `The account is on the ${item.item} plan already.`, {
      hint: 'Choose another plan, or buy a credit pack.',
    });
  }
  return provider.createCheckout(
    { ...item, accountId, email: account.email, customer: account.provider_customer },
    now,
  );
}

import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';

/**
 * Self-service accounts (issue 16): emailed sign-in links and sessions, key names, the
 * payment state of an account (provider customer and subscription, a plan change due at
 * the period end, a hold after a dispute), the payment events applied (each once, by
 * provider and event id), checkouts, pack payments (so a refund or dispute finds its
 * account) and the overage invoices of the local provider. Links and sessions are stored
 * as sha256 of their random token, never the token.
 */
export const selfService: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration must not follow the Database interface
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('sign_in_links')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema
      .createTable('sessions')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sessions_account_idx').on('sessions').column('account_id').execute();
    await db.schema.alterTable('api_keys').addColumn('name', 'text').execute();
    await db.schema.alterTable('accounts').addColumn('provider_customer', 'text').execute();
    await db.schema.alterTable('accounts').addColumn('provider_subscription', 'text').execute();
    await db.schema.alterTable('accounts').addColumn('period_end', 'bigint').execute();
    await db.schema.alterTable('accounts').addColumn('plan_at_period_end', 'text').execute();
    await db.schema.alterTable('accounts').addColumn('plan_event_at', 'bigint').execute();
    await db.schema.alterTable('accounts').addColumn('hold_reason', 'text').execute();
    await db.schema.alterTable('accounts').addColumn('closed_at', 'bigint').execute();
    await db.schema
      .createTable('billing_events')
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text')
      .addColumn('applied_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('billing_events_pk', ['provider', 'event_id'])
      .execute();
    await db.schema
      .createTable('checkouts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('plan', 'pack')`))
      .addColumn('item', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('completed_at', 'bigint')
      .execute();
    await db.schema
      .createTable('pack_payments')
      .addColumn('payment_ref', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('pack', 'text', (c) => c.notNull())
      .addColumn('amount_cents', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('invoices')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('overage_pages', 'integer', (c) => c.notNull())
      .addColumn('amount_cents', 'integer', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('provider_ref', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('invoices_account_period', ['account_id', 'period'])
      .execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up()
  async down(db: Kysely<any>): Promise<void> {
    for (const t of ['invoices', 'pack_payments', 'checkouts', 'billing_events', 'sessions', 'sign_in_links'])
      await db.schema.dropTable(t).execute();
    for (const c of [
      'closed_at',
      'hold_reason',
      'plan_event_at',
      'plan_at_period_end',
      'period_end',
      'provider_subscription',
      'provider_customer',
    ])
      await db.schema.alterTable('accounts').dropColumn(c).execute();
    await db.schema.alterTable('api_keys').dropColumn('name').execute();
  },
};

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPeriodEnds, invoiceOverage } from '../../src/billing/checkout-events.js';
import { charge } from '../../src/billing/meter.js';
import {
  LOCAL_SIGNATURE_HEADER,
  localEvent,
  localSigningKey,
  signLocal,
} from '../../src/billing/providers/local.js';
import type { ProviderEvent } from '../../src/billing/providers/types.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import { DB_KINDS } from '../helpers/env.js';
import { csrfOf, PageClient } from '../helpers/pages.js';

let t: TestApp;

const json = { 'content-type': 'application/json' };

async function newAccount(email: string) {
  const key = await t.newKey(email, 'free', 'live');
  const id = (
    await t.app.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()
  ).id;
  return { key, id };
}

async function checkout(key: string, body: unknown) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/billing/checkout',
    headers: { ...bearer(key), ...json },
    payload: body as object,
  });
}

/** Opens the local checkout page and pays it, as a browser would. */
async function pay(url: string) {
  const path = new URL(url).pathname;
  const c = new PageClient(t.app);
  const page = await c.get(path);
  expect(page.statusCode).toBe(200);
  const csrf = csrfOf(page.body);
  const res = await c.post(path, { _csrf: csrf });
  expect(res.statusCode).toBe(303);
  return { c, path, csrf };
}

function deliver(event: ProviderEvent | string, signature?: string) {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  const sig =
    signature ?? signLocal(localSigningKey(t.env.config.tokenSecret), body, Math.floor(Date.now() / 1000));
  return t.app.inject({
    method: 'POST',
    url: '/v1/billing/webhook/local',
    headers: { ...json, [LOCAL_SIGNATURE_HEADER]: sig },
    payload: body,
  });
}

const usage = async (key: string) =>
  (await t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(key) })).json();
const plan = async (key: string) =>
  (await t.app.inject({ method: 'GET', url: '/v1/limits', headers: bearer(key) })).json().plan;

describe.each(DB_KINDS)('POST /v1/billing/checkout with the local provider (%s)', (kind) => {
  beforeAll(async () => {
    t = await startApp(kind);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('answers a url bound to the account and an expiry; refuses unknown plans and packs', async () => {
    const { key } = await newAccount('co@example.com');
    const res = await checkout(key, { pack: 'try_it' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.url).toMatch(/^http:\/\/127\.0\.0\.1:8080\/billing\/local\/checkout\/cs_local_/);
    expect(Date.parse(body.expires_at)).toBeGreaterThan(Date.now());
    for (const bad of [
      { plan: 'platinum' },
      { pack: 'huge' },
      { plan: 'free' },
      {},
      { plan: 'starter', pack: 'large' },
    ]) {
      const r = await checkout(key, bad);
      expect(r.statusCode, JSON.stringify(bad)).toBe(400);
      expect(r.json().error.code).toBe('invalid_request');
    }
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/v1/billing/checkout',
          headers: json,
          payload: { pack: 'try_it' },
        })
      ).statusCode,
    ).toBe(401);
  });

  it('credits a paid pack once, even when the page is posted twice', async () => {
    const { key } = await newAccount('pack@example.com');
    expect((await usage(key)).credit_pages).toBe(0);
    const { url } = (await checkout(key, { pack: 'try_it' })).json();
    const { c, path, csrf } = await pay(url);
    expect((await usage(key)).credit_pages).toBe(500);
    const again = await c.get(path);
    expect(again.body).toContain('This checkout is paid');
    const res = await c.post(path, { _csrf: csrf });
    expect(res.statusCode).toBe(303);
    expect((await usage(key)).credit_pages).toBe(500);
  });

  it('applies an event once by id, and refuses unsigned, badly signed or old callbacks (401, nothing changed)', async () => {
    const { key, id } = await newAccount('events@example.com');
    const event = localEvent(
      'checkout.session.completed',
      {
        id: 'cs_local_x1',
        client_reference_id: id,
        payment_intent: 'pi_local_x1',
        amount_total: 2500,
        metadata: { kind: 'pack', item: 'large' },
      },
      Date.now(),
    );
    const body = JSON.stringify(event);
    const key1 = localSigningKey(t.env.config.tokenSecret);
    const now = Math.floor(Date.now() / 1000);
    expect(
      (await t.app.inject({ method: 'POST', url: '/v1/billing/webhook/local', headers: json, payload: body }))
        .statusCode,
    ).toBe(401);
    expect((await deliver(body, signLocal(Buffer.from('another key'), body, now))).statusCode).toBe(401);
    expect((await deliver(body, signLocal(key1, body, now - 600))).statusCode).toBe(401);
    expect((await deliver(body, signLocal(key1, `${body} `, now))).statusCode).toBe(401);
    expect((await usage(key)).credit_pages).toBe(0);
    const first = await deliver(body);
    expect(first.statusCode).toBe(200);
    expect(first.json().outcome).toBe('applied');
    const second = await deliver(body);
    expect(second.json().outcome).toBe('duplicate');
    expect((await usage(key)).credit_pages).toBe(5_000);
    // Unknown events are acknowledged and ignored.
    const unknown = await deliver(
      localEvent('customer.created', { id: 'cus_1', metadata: { account_id: id } }, Date.now()),
    );
    expect(unknown.statusCode).toBe(200);
    expect(unknown.json().outcome).toBe('ignored');
    // Another provider's path is refused.
    const stripePath = await t.app.inject({
      method: 'POST',
      url: '/v1/billing/webhook/stripe',
      headers: json,
      payload: body,
    });
    expect(stripePath.statusCode).toBe(400);
    const unknownProvider = await t.app.inject({
      method: 'POST',
      url: '/v1/billing/webhook/paypal',
      headers: json,
      payload: body,
    });
    expect(unknownProvider.statusCode).toBe(400);
    expect(unknownProvider.json().error.code).toBe('invalid_request');
  });

  it('starts a plan, cancels it back to free at the period end', async () => {
    const { key, id } = await newAccount('plan@example.com');
    const { url } = (await checkout(key, { plan: 'starter' })).json();
    await pay(url);
    expect(await plan(key)).toBe('starter');
    const again = await checkout(key, { plan: 'starter' });
    expect(again.statusCode).toBe(400);
    const row = await t.app.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const a = row as unknown as {
      period_end: number;
      provider_subscription: string;
      provider_customer: string;
    };
    expect(a.period_end).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    // Upgrade: a checkout for another plan; the new subscription replaces the old one.
    await pay((await checkout(key, { plan: 'growth' })).json().url);
    expect(await plan(key)).toBe('growth');
    const upgraded = (await t.app.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()) as unknown as typeof a;
    expect(upgraded.provider_subscription).not.toBe(a.provider_subscription);
    // News of the replaced subscription changes nothing.
    const stale = await deliver(
      localEvent(
        'customer.subscription.deleted',
        { id: a.provider_subscription, customer: a.provider_customer, metadata: { account_id: id } },
        Date.now() + 5_000,
      ),
    );
    expect(stale.json().outcome).toBe('applied');
    expect(await plan(key)).toBe('growth');
    Object.assign(a, upgraded);
    // Cancel: the plan stays until the period end, then free.
    const cancel = await deliver(
      localEvent(
        'customer.subscription.updated',
        {
          id: a.provider_subscription,
          customer: a.provider_customer,
          cancel_at_period_end: true,
          current_period_end: Math.floor(a.period_end / 1000),
          metadata: { account_id: id },
        },
        Date.now(),
      ),
    );
    expect(cancel.json().outcome).toBe('applied');
    expect(await plan(key)).toBe('growth');
    expect(await applyPeriodEnds(t.app.db, a.period_end - 1)).toBe(0);
    expect(await applyPeriodEnds(t.app.db, a.period_end)).toBeGreaterThanOrEqual(1);
    expect(await plan(key)).toBe('free');
  });

  it('takes refunded credits back, never below what was used', async () => {
    const { key, id } = await newAccount('refund@example.com');
    await pay((await checkout(key, { pack: 'try_it' })).json().url);
    const pi = (
      await t.app.db
        .withTables<{ pack_payments: { payment_ref: string; account_id: string } }>()
        .selectFrom('pack_payments')
        .select('payment_ref')
        .where('account_id', '=', id)
        .executeTakeFirstOrThrow()
    ).payment_ref;
    // 200 allowance + 300 of the pack used.
    await charge(
      t.app.db,
      { kind: 'account', accountId: id, mode: 'live', plan: 'free' },
      'req_r1',
      500,
      {},
      Date.now(),
    );
    expect((await usage(key)).credit_pages).toBe(200);
    // Half refunded: 250 pages to take back, only 200 left.
    const half = await deliver(
      localEvent(
        'charge.refunded',
        { id: 'ch_1', payment_intent: pi, amount: 500, amount_refunded: 250 },
        Date.now(),
      ),
    );
    expect(half.json().outcome).toBe('applied');
    expect((await usage(key)).credit_pages).toBe(0);
    const grants = await t.app.db
      .withTables<{ credit_grants: { account_id: string; pages: number } }>()
      .selectFrom('credit_grants')
      .select('pages')
      .where('account_id', '=', id)
      .execute();
    expect(grants.map((g) => g.pages).sort((x, y) => x - y)).toEqual([-200, 500]);
  });

  it('puts a disputed account on hold: its keys answer 402 quota_exceeded naming the hold', async () => {
    const { key, id } = await newAccount('dispute@example.com');
    await pay((await checkout(key, { pack: 'large' })).json().url);
    const pi = (
      await t.app.db
        .withTables<{ pack_payments: { payment_ref: string; account_id: string } }>()
        .selectFrom('pack_payments')
        .select('payment_ref')
        .where('account_id', '=', id)
        .executeTakeFirstOrThrow()
    ).payment_ref;
    const res = await deliver(
      localEvent('charge.dispute.created', { id: 'dp_1', payment_intent: pi, amount: 2500 }, Date.now()),
    );
    expect(res.json().outcome).toBe('applied');
    const refused = await t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(key) });
    expect(refused.statusCode).toBe(402);
    expect(refused.json().error.code).toBe('quota_exceeded');
    expect(refused.json().error.hint).toContain('on hold (payment dispute dp_1)');
    // The account page says so.
    const { createSignInLink } = await import('../../src/domain/sign-in.js');
    const { token } = await createSignInLink(t.app.db, 'dispute@example.com', Date.now());
    const c = new PageClient(t.app);
    const confirm = await c.get(`/account/link?token=${token}`);
    await c.post('/account/link', { _csrf: csrfOf(confirm.body), token });
    expect((await c.get('/account')).body).toContain('This account is on hold (payment dispute dp_1)');
    // Another account is untouched.
    const other = await t.newKey('bystander@example.com');
    expect((await t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(other) })).statusCode).toBe(
      200,
    );
  });

  it('totals Starter overage per period and records one invoice at the period end, shown on the account page', async () => {
    const { key, id } = await newAccount('overage@example.com');
    await pay((await checkout(key, { plan: 'starter' })).json().url);
    const subject = {
      kind: 'account' as const,
      accountId: id,
      mode: 'live' as const,
      plan: 'starter' as const,
    };
    const lastMonth = Date.UTC(2026, 9, 15);
    await charge(t.app.db, subject, 'req_o1', 4_990, {}, lastMonth);
    const over = await charge(t.app.db, subject, 'req_o2', 25, {}, lastMonth + 1000);
    expect(over.overagePages).toBe(15);
    await charge(t.app.db, subject, 'req_o3', 6, {}, lastMonth + 2000);
    const endOfPeriod = Date.UTC(2026, 10, 1, 0, 5);
    expect(await invoiceOverage(t.app.db, t.app.payments, endOfPeriod)).toBe(1);
    expect(await invoiceOverage(t.app.db, t.app.payments, endOfPeriod + 60_000)).toBe(0);
    const invoices = await t.app.db
      .withTables<{
        invoices: { account_id: string; period: string; overage_pages: number; amount_cents: number };
      }>()
      .selectFrom('invoices')
      .selectAll()
      .where('account_id', '=', id)
      .execute();
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ period: '2026-10', overage_pages: 21, amount_cents: 11 });
    const { createSignInLink } = await import('../../src/domain/sign-in.js');
    const { token } = await createSignInLink(t.app.db, 'overage@example.com', Date.now());
    const c = new PageClient(t.app);
    const confirm = await c.get(`/account/link?token=${token}`);
    await c.post('/account/link', { _csrf: csrfOf(confirm.body), token });
    expect((await c.get('/account')).body).toContain('2026-10: 21 pages, 0.11 USD');
  });
});

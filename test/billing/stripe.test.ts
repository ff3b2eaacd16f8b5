import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoiceOverage } from '../../src/billing/checkout-events.js';
import { charge } from '../../src/billing/meter.js';
import { createSignInLink } from '../../src/domain/sign-in.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import { csrfOf, PageClient } from '../helpers/pages.js';

const WEBHOOK_SECRET = 'whsec_test_0123456789abcdef';
let t: TestApp;
let stub: Server;
/** What the stub Stripe API received: method, path and the form-encoded body. */
const calls: { method: string; path: string; form: URLSearchParams; auth: string | undefined }[] = [];
const stripe = new Stripe('sk_test_unused');

beforeAll(async () => {
  stub = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const path = req.url ?? '';
      calls.push({ method: req.method ?? '', path, form, auth: req.headers.authorization });
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST' && path === '/v1/checkout/sessions') {
        const id = `cs_test_${calls.length}`;
        res.end(
          JSON.stringify({
            id,
            object: 'checkout.session',
            url: `https://checkout.stripe.com/c/pay/${id}`,
            expires_at: Number(form.get('expires_at')),
          }),
        );
      } else if (req.method === 'POST' && path === '/v1/invoiceitems') {
        res.end(
          JSON.stringify({ id: 'ii_stub_1', object: 'invoiceitem', amount: Number(form.get('amount')) }),
        );
      } else if (req.method === 'POST' && path.startsWith('/v1/subscriptions/')) {
        res.end(
          JSON.stringify({ id: path.split('/').pop(), object: 'subscription', cancel_at_period_end: true }),
        );
      } else if (req.method === 'DELETE' && path.startsWith('/v1/subscriptions/')) {
        res.end(JSON.stringify({ id: path.split('/').pop(), object: 'subscription', status: 'canceled' }));
      } else {
        res.statusCode = 404;
        res.end(
          JSON.stringify({
            error: { type: 'invalid_request_error', message: `stub: no ${req.method} ${path}` },
          }),
        );
      }
    });
  });
  await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
  const port = (stub.address() as AddressInfo).port;
  t = await startApp('sqlite', {
    STRIPE_SECRET_KEY: 'sk_test_stub',
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_BASE: `http://127.0.0.1:${port}`,
  });
});

afterAll(async () => {
  await t?.close();
  await new Promise<void>((r) => stub?.close(() => r()));
});

const json = { 'content-type': 'application/json' };

function send(event: object, opts: { secret?: string; timestamp?: number } = {}) {
  const payload = JSON.stringify(event);
  const header = stripe.webhooks.generateTestHeaderString({
    payload,
    secret: opts.secret ?? WEBHOOK_SECRET,
    ...(opts.timestamp !== undefined ? { timestamp: opts.timestamp } : {}),
  });
  return t.app.inject({
    method: 'POST',
    url: '/v1/billing/webhook/stripe',
    headers: { ...json, 'stripe-signature': header },
    payload,
  });
}

let seq = 0;
const event = (type: string, object: object, created = Math.floor(Date.now() / 1000)) => ({
  id: `evt_test_${++seq}`,
  object: 'event',
  type,
  created,
  data: { object },
});

async function account(email: string) {
  const key = await t.newKey(email, 'free', 'live');
  const id = (
    await t.app.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()
  ).id;
  return { key, id };
}
const usage = async (key: string) =>
  (await t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(key) })).json();
const plan = async (key: string) =>
  (await t.app.inject({ method: 'GET', url: '/v1/limits', headers: bearer(key) })).json().plan;

describe('the stripe provider', () => {
  it('creates Checkout Sessions on the (stub) Stripe API: a subscription for a plan, a payment for a pack', async () => {
    const { key, id } = await account('stripe-co@example.com');
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/billing/checkout',
      headers: { ...bearer(key), ...json },
      payload: { plan: 'growth' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().url).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
    const sub = calls.at(-1)!;
    expect(sub.path).toBe('/v1/checkout/sessions');
    expect(sub.auth).toBe('Bearer sk_test_stub');
    expect(sub.form.get('mode')).toBe('subscription');
    expect(sub.form.get('client_reference_id')).toBe(id);
    expect(sub.form.get('customer_email')).toBe('stripe-co@example.com');
    expect(sub.form.get('line_items[0][price_data][recurring][interval]')).toBe('month');
    expect(sub.form.get('subscription_data[metadata][plan]')).toBe('growth');
    const pack = await t.app.inject({
      method: 'POST',
      url: '/v1/billing/checkout',
      headers: { ...bearer(key), ...json },
      payload: { pack: 'large' },
    });
    expect(pack.statusCode).toBe(200);
    const p = calls.at(-1)!;
    expect(p.form.get('mode')).toBe('payment');
    expect(p.form.get('payment_intent_data[metadata][item]')).toBe('large');
    expect(Date.parse(pack.json().expires_at)).toBeGreaterThan(Date.now());
  });

  it('applies a signed event once when delivered twice', async () => {
    const { key, id } = await account('stripe-pack@example.com');
    const e = event('checkout.session.completed', {
      id: 'cs_test_pack',
      object: 'checkout.session',
      mode: 'payment',
      client_reference_id: id,
      customer: 'cus_pack',
      payment_intent: 'pi_pack',
      amount_total: 500,
      metadata: { account_id: id, kind: 'pack', item: 'try_it' },
    });
    const first = await send(e);
    expect(first.statusCode).toBe(200);
    expect(first.json().outcome).toBe('applied');
    const second = await send(e);
    expect(second.statusCode).toBe(200);
    expect(second.json().outcome).toBe('duplicate');
    expect((await usage(key)).credit_pages).toBe(500);
  });

  it('keeps the newest subscription state when events arrive out of order', async () => {
    const { key, id } = await account('stripe-order@example.com');
    const t0 = Math.floor(Date.now() / 1000);
    const completed = event(
      'checkout.session.completed',
      {
        id: 'cs_test_o',
        mode: 'subscription',
        client_reference_id: id,
        customer: 'cus_o',
        subscription: 'sub_o',
        metadata: { account_id: id, kind: 'plan', item: 'starter' },
      },
      t0,
    );
    const upgraded = event(
      'customer.subscription.updated',
      {
        id: 'sub_o',
        object: 'subscription',
        customer: 'cus_o',
        status: 'active',
        cancel_at_period_end: false,
        items: { data: [{ current_period_end: t0 + 30 * 86_400, price: { lookup_key: null } }] },
        metadata: { account_id: id, plan: 'scale' },
      },
      t0 + 60,
    );
    expect((await send(upgraded)).json().outcome).toBe('applied');
    expect(await plan(key)).toBe('scale');
    // The older event, arriving late, does not undo the upgrade.
    expect((await send(completed)).json().outcome).toBe('applied');
    expect(await plan(key)).toBe('scale');
    const row = (await t.app.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()) as unknown as Record<string, unknown>;
    expect(row.provider_subscription).toBe('sub_o');
    expect(row.period_end).toBe((t0 + 30 * 86_400) * 1000);
    // Deleted (the period of a cancelled plan ran out): back to free.
    expect(
      (
        await send(
          event(
            'customer.subscription.deleted',
            { id: 'sub_o', customer: 'cus_o', metadata: { account_id: id } },
            t0 + 120,
          ),
        )
      ).statusCode,
    ).toBe(200);
    expect(await plan(key)).toBe('free');
  });

  it('refuses a bad signature and an old timestamp with 401, changing nothing', async () => {
    const { key, id } = await account('stripe-bad@example.com');
    const e = event('checkout.session.completed', {
      id: 'cs_bad',
      client_reference_id: id,
      payment_intent: 'pi_bad',
      metadata: { kind: 'pack', item: 'large' },
    });
    const bad = await send(e, { secret: 'whsec_wrong' });
    expect(bad.statusCode).toBe(401);
    expect(bad.json().error.code).toBe('unauthorized');
    const old = await send(e, { timestamp: Math.floor(Date.now() / 1000) - 600 });
    expect(old.statusCode).toBe(401);
    const unsigned = await t.app.inject({
      method: 'POST',
      url: '/v1/billing/webhook/stripe',
      headers: json,
      payload: JSON.stringify(e),
    });
    expect(unsigned.statusCode).toBe(401);
    expect((await usage(key)).credit_pages).toBe(0);
    // The same event, properly signed, still applies (nothing was recorded by the refusals).
    expect((await send(e)).json().outcome).toBe('applied');
    expect((await usage(key)).credit_pages).toBe(5_000);
  });

  it('cancels through the Stripe API from the account page', async () => {
    const { key, id } = await account('stripe-cancel@example.com');
    await send(
      event('checkout.session.completed', {
        id: 'cs_c',
        client_reference_id: id,
        customer: 'cus_c',
        subscription: 'sub_c',
        metadata: { kind: 'plan', item: 'starter' },
      }),
    );
    expect(await plan(key)).toBe('starter');
    const { token } = await createSignInLink(t.app.db, 'stripe-cancel@example.com', Date.now());
    const c = new PageClient(t.app);
    const confirm = await c.get(`/account/link?token=${token}`);
    await c.post('/account/link', { _csrf: csrfOf(confirm.body), token });
    const page = await c.get('/account');
    const res = await c.post('/account/plan/cancel', { _csrf: csrfOf(page.body) });
    expect(res.statusCode).toBe(200);
    const call = calls.at(-1)!;
    expect(call.path).toBe('/v1/subscriptions/sub_c');
    expect(call.form.get('cancel_at_period_end')).toBe('true');
  });

  it("charges a period's Starter overage as an invoice item on the customer", async () => {
    const { id } = await account('stripe-over@example.com');
    await send(
      event('checkout.session.completed', {
        id: 'cs_ov',
        client_reference_id: id,
        customer: 'cus_ov',
        subscription: 'sub_ov',
        metadata: { kind: 'plan', item: 'starter' },
      }),
    );
    const subject = {
      kind: 'account' as const,
      accountId: id,
      mode: 'live' as const,
      plan: 'starter' as const,
    };
    await charge(t.app.db, subject, 'req_s1', 5_100, {}, Date.UTC(2026, 8, 20));
    expect(await invoiceOverage(t.app.db, t.app.payments, Date.UTC(2026, 9, 1, 1))).toBe(1);
    const call = calls.at(-1)!;
    expect(call.path).toBe('/v1/invoiceitems');
    expect(call.form.get('customer')).toBe('cus_ov');
    expect(call.form.get('amount')).toBe('50');
    expect(call.form.get('metadata[period]')).toBe('2026-09');
    expect(await invoiceOverage(t.app.db, t.app.payments, Date.UTC(2026, 9, 1, 2))).toBe(0);
  });

  it('cancels the old subscription when a new checkout changes the plan, and a dispute of a plan payment holds the account', async () => {
    const { key, id } = await account('stripe-change@example.com');
    const t0 = Math.floor(Date.now() / 1000);
    await send(
      event(
        'checkout.session.completed',
        {
          id: 'cs_ch1',
          client_reference_id: id,
          customer: 'cus_ch',
          subscription: 'sub_old',
          metadata: { kind: 'plan', item: 'starter' },
        },
        t0,
      ),
    );
    await send(
      event(
        'invoice.paid',
        {
          id: 'in_1',
          customer: 'cus_ch',
          payment_intent: 'pi_plan_1',
          amount_paid: 2900,
          lines: { data: [{ period: { start: t0, end: t0 + 30 * 86_400 } }] },
        },
        t0 + 1,
      ),
    );
    const before = calls.length;
    await send(
      event(
        'checkout.session.completed',
        {
          id: 'cs_ch2',
          client_reference_id: id,
          customer: 'cus_ch',
          subscription: 'sub_new',
          metadata: { kind: 'plan', item: 'scale' },
        },
        t0 + 10,
      ),
    );
    expect(await plan(key)).toBe('scale');
    const cancel = calls.slice(before).find((c) => c.method === 'DELETE');
    expect(cancel?.path).toBe('/v1/subscriptions/sub_old');
    // Stripe then reports the old one deleted: the new plan stays.
    await send(event('customer.subscription.deleted', { id: 'sub_old', customer: 'cus_ch' }, t0 + 20));
    expect(await plan(key)).toBe('scale');
    const row = (await t.app.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()) as unknown as Record<string, unknown>;
    expect(row.period_end).toBe((t0 + 30 * 86_400) * 1000);
    // A dispute of the first invoice's payment (no metadata, no customer on a dispute).
    await send(
      event(
        'charge.dispute.created',
        { id: 'dp_plan', object: 'dispute', payment_intent: 'pi_plan_1', amount: 2900 },
        t0 + 30,
      ),
    );
    const held = await t.app.inject({ method: 'GET', url: '/v1/limits', headers: bearer(key) });
    expect(held.statusCode).toBe(402);
    expect(held.json().error.hint).toContain('payment dispute dp_plan');
  });
});

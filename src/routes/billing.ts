import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { checkoutItem, startCheckout } from '../billing/checkout.js';
import { applyPeriodEnds, applyProviderEvent, invoiceOverage } from '../billing/checkout-events.js';
import {
  LOCAL_SIGNATURE_HEADER,
  localCheckoutEvents,
  localProvider,
  localSigningKey,
  signLocal,
} from '../billing/providers/local.js';
import { stripeProvider } from '../billing/providers/stripe.js';
import { type PaymentProvider, PRICE_CENTS, type ProviderEvent } from '../billing/providers/types.js';
import { ApiError } from '../kernel/api-error.js';
import formbody from '../plugins/external/formbody.js';
import { Ack, CheckoutRequest, CheckoutResult } from '../schemas/billing.js';
import { errorResponses } from '../schemas/errors.js';
import { ref } from '../schemas/ref.js';
import { isoSeconds } from '../schemas/time.js';
import type { SelfServiceSchema } from '../store/self-service-schema.js';
import { esc, localCheckoutPage, messagePage } from './account-pages-view.js';

/** How often cancelled plans past their period end are moved back to free. */
const PERIOD_SWEEP_MS = 60_000;

/**
 * The payment provider as an app service (`fastify.payments`): Stripe when
 * STRIPE_SECRET_KEY is set, the local provider otherwise. Also the hold of a disputed
 * account: every key-authenticated request of it answers 402 quota_exceeded naming the hold.
 * Registered before the routes, so its preHandler hook covers all of them.
 */
export const payments = fp(
  async function paymentsPlugin(fastify: FastifyInstance) {
    const { config } = fastify;
    const provider: PaymentProvider = config.accounts.stripeSecretKey
      ? stripeProvider({
          secretKey: config.accounts.stripeSecretKey,
          webhookSecret: config.accounts.stripeWebhookSecret,
          apiBase: config.accounts.stripeApiBase,
          publicBaseUrl: config.publicBaseUrl,
        })
      : localProvider(fastify.db, config.publicBaseUrl, localSigningKey(config.tokenSecret));
    fastify.decorate('payments', provider);

    fastify.addHook('preHandler', async (request: FastifyRequest) => {
      const p = request.principal;
      if (!p) return;
      // Read with the key (one statement for both) when the key plugin set it.
      const row =
        request.accountHold !== undefined
          ? { hold_reason: request.accountHold }
          : await fastify.db
              .withTables<SelfServiceSchema>()
              .selectFrom('accounts')
              .select('hold_reason')
              .where('id', '=', p.accountId)
              .executeTakeFirst();
      if (row?.hold_reason) {
        throw new ApiError('quota_exceeded', 'The account is on hold.', {
          hint: `The account is on hold (${row.hold_reason}); its keys work again once the hold is cleared. Reply to the payment provider's dispute or contact support.`,
        });
      }
    });

    const sweep = async () => {
      try {
        await applyPeriodEnds(fastify.db, config.now());
        await invoiceOverage(fastify.db, provider, config.now());
      } catch (err) {
        fastify.log.error({ err }, 'period-end sweep failed');
      }
    };
    const timer = setInterval(sweep, PERIOD_SWEEP_MS);
    timer.unref();
    fastify.addHook('onClose', async () => clearInterval(timer));
  },
  { name: 'payments', dependencies: ['db', 'auth'] },
);

/** Posts events to this service's own callback route, signed as the local provider signs. */
export async function postLocalEvents(fastify: FastifyInstance, events: ProviderEvent[]): Promise<void> {
  const key = localSigningKey(fastify.config.tokenSecret);
  for (const event of events) {
    const body = JSON.stringify(event);
    const res = await fastify.inject({
      method: 'POST',
      url: '/v1/billing/webhook/local',
      headers: {
        'content-type': 'application/json',
        [LOCAL_SIGNATURE_HEADER]: signLocal(key, body, Math.floor(fastify.config.now() / 1000)),
      },
      payload: body,
    });
    if (res.statusCode !== 200) throw new Error(`local callback answered ${res.statusCode}: ${res.body}`);
  }
}

async function webhookRoute(fastify: FastifyInstance): Promise<void> {
  // The signature covers the exact bytes received: this route reads the raw body.
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: 1024 * 1024 },
    (_r, body, done) => done(null, body),
  );
  fastify.post(
    '/v1/billing/webhook/:provider',
    {
      schema: {
        summary: 'Payment provider callback',
        description:
          'Authenticated by the provider signature header (Stripe-Signature for stripe, ' +
          'X-Pdfedit-Signature for local), not a key. Each event is applied once by event id; ' +
          'unknown events are acknowledged and ignored.',
        operationId: 'PaymentProviderCallback',
        tags: ['billing'],
        security: [],
        params: Type.Object({
          provider: Type.String({
            maxLength: 32,
            description:
              'The payment provider this service runs: stripe when STRIPE_SECRET_KEY is set, else local; another answers 400.',
          }),
        }),
        response: {
          200: ref(Ack, { description: 'Acknowledged (also for an event applied before, or one ignored).' }),
          ...errorResponses(400, 401),
        },
      },
      // The body stays the raw bytes, verified by signature rather than by a schema; the
      // OpenAPI document still describes it as a JSON object.
      config: { openapi: { body: { 'application/json': Type.Object({}, { additionalProperties: true }) } } },
    },
    async (request) => {
      const { provider } = request.params as { provider: string };
      if (provider !== fastify.payments.name) {
        throw new ApiError(
          'invalid_request',
          `This service takes payment callbacks from "${fastify.payments.name}" only.`,
        );
      }
      const raw = request.body;
      if (!Buffer.isBuffer(raw)) throw new ApiError('invalid_request', 'The callback body must be JSON.');
      const event = fastify.payments.verify(raw, request.headers, fastify.config.now());
      if (!event) {
        throw new ApiError('unauthorized', 'The callback signature is missing, wrong or too old.', {
          hint: 'Callbacks are signed by the payment provider; nothing was changed.',
        });
      }
      const { outcome, replaced } = await applyProviderEvent(
        fastify.db,
        provider,
        event,
        fastify.config.now(),
      );
      request.log.info({ event: event.id, type: event.type, outcome, replaced }, 'payment event');
      if (replaced) {
        // A plan change through a new checkout: the old subscription ends now. A failure is
        // logged, not answered: the event is applied, and the provider would only resend it.
        await fastify.payments
          .cancelNow(replaced, '', fastify.config.now())
          .catch((err) =>
            request.log.error({ err, subscription: replaced }, 'could not cancel a replaced subscription'),
          );
      }
      return { received: true, outcome };
    },
  );
}

/** POST /v1/billing/checkout, the callback route, and the local provider's checkout page. */
export default async function billingRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.post(
    '/v1/billing/checkout',
    {
      onRequest: [fastify.requireKey, fastify.rateLimit],
      schema: {
        summary: 'Create checkout link',
        description:
          'A subscription plan (`{plan}`) or a credit pack (`{pack}`). The link is bound to the ' +
          "calling key's account; the payment applies through the provider callback.",
        operationId: 'CreateCheckoutLink',
        tags: ['billing'],
        body: ref(CheckoutRequest),
        response: {
          200: ref(CheckoutResult, { description: "Checkout URL bound to the calling key's account." }),
          ...errorResponses(400, 401, 402, 429),
        },
      },
    },
    async (request) => {
      const p = request.principal!;
      const item = checkoutItem(request.body as { plan?: string; pack?: string });
      const c = await startCheckout(fastify.db, fastify.payments, p.accountId, item, fastify.config.now());
      return { url: c.url, expires_at: isoSeconds(c.expiresAt) };
    },
  );

  await fastify.register(webhookRoute);

  await fastify.register(async function localCheckoutPages(pages: FastifyInstance) {
    await pages.register(formbody);
    pages.setErrorHandler((err, request, reply: FastifyReply) => {
      const status = (err as { statusCode?: number }).statusCode === 403 ? 403 : 400;
      request.log.info({ err }, 'checkout page refused');
      reply
        .code(status)
        .type('text/html; charset=utf-8')
        .send(messagePage('Checkout', 'The form has expired: reload the page and try again.'));
    });
    const sdb = pages.db.withTables<SelfServiceSchema>();
    const find = (id: string) =>
      sdb
        .selectFrom('checkouts')
        .selectAll()
        .where('id', '=', id)
        .where('provider', '=', 'local')
        .executeTakeFirst();
    const params = Type.Object({ id: Type.String({ pattern: '^cs_local_[0-9A-Za-z]{1,40}$' }) });

    pages.get('/billing/local/checkout/:id', { schema: { hide: true, params } }, async (request, reply) => {
      const { id } = request.params as { id: string };
      const c = pages.payments.name === 'local' ? await find(id) : undefined;
      reply.type('text/html; charset=utf-8');
      if (!c) return reply.code(404).send(messagePage('Checkout', 'No such checkout.'));
      const csrf = reply.generateCsrf();
      return localCheckoutPage(csrf, {
        id: c.id,
        kind: c.kind,
        item: c.item,
        cents: PRICE_CENTS[c.item] ?? 0,
        expired: c.expires_at <= pages.config.now(),
        done: c.completed_at !== null,
      });
    });

    pages.post(
      '/billing/local/checkout/:id',
      {
        schema: {
          hide: true,
          params,
          body: Type.Object(
            { _csrf: Type.Optional(Type.String({ maxLength: 200 })) },
            { additionalProperties: false },
          ),
        },
        preHandler: pages.csrfProtection,
      },
      async (request, reply) => {
        const { id } = request.params as { id: string };
        const now = pages.config.now();
        const c = pages.payments.name === 'local' ? await find(id) : undefined;
        reply.type('text/html; charset=utf-8');
        if (!c) return reply.code(404).send(messagePage('Checkout', 'No such checkout.'));
        // Claimed by one conditional update: of two concurrent payments only one goes on.
        const claimed = await sdb
          .updateTable('checkouts')
          .set({ completed_at: now })
          .where('id', '=', c.id)
          .where('completed_at', 'is', null)
          .where('expires_at', '>', now)
          .executeTakeFirst();
        if (claimed.numUpdatedRows === 0n) return reply.redirect(`/billing/local/checkout/${esc(c.id)}`, 303);
        const customer = `cus_local_${c.account_id.slice('acct_'.length)}`;
        await postLocalEvents(pages, localCheckoutEvents(c, customer, now));
        return reply.redirect('/account?paid=1', 303);
      },
    );
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    payments: PaymentProvider;
  }
}

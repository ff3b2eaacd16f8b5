import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { checkoutItem, startCheckout } from '../billing/checkout.js';
import { clientAddressGroup } from '../billing/client-ip.js';
import { usageOf } from '../billing/meter.js';
import { isAccountPlan } from '../billing/plans.js';
import { localEvent } from '../billing/providers/local.js';
import { periodOf } from '../billing/subject.js';
import { getWebhookSecret, rotateWebhookSecret } from '../domain/accounts.js';
import { createKey } from '../domain/api-keys.js';
import { closeAccount } from '../domain/close-account.js';
import { createSession, endSession, SESSION_TTL_MS, selfDb, sessionAccount } from '../domain/sessions.js';
import { consumeSignInLink, createSignInLink, peekSignInLink } from '../domain/sign-in.js';
import { acceptedCurrentTerms, TERMS_VERSION } from '../domain/terms.js';
import { ApiError } from '../kernel/api-error.js';
import { makeMailer } from '../net/mail.js';
import { MemoryRateCounter, type RateCounter, RedisRateCounter } from '../plugins/app/rate-limit.js';
import formbody from '../plugins/external/formbody.js';
import multipart from '../plugins/external/multipart.js';
import type { JobsSchema } from '../store/jobs-schema.js';
import { tryItRoutes } from './account-pages-try.js';
import {
  type AccountView,
  accountPage,
  checkMailPage,
  confirmLinkPage,
  layout,
  messagePage,
  signInPage,
} from './account-pages-view.js';
import { postLocalEvents } from './billing.js';

export const SESSION_COOKIE = 'pdfedit_session';
/** Sign-in mails per address group and per email in a 15-minute window. */
export const SIGN_IN_LIMITS = { perAddress: 10, perEmail: 5, windowMs: 15 * 60 * 1000 };

// Optional in the schema: a form without it is refused by the CSRF check (403), not as malformed.
const Csrf = { _csrf: Type.Optional(Type.String({ maxLength: 200 })) };
const form = (props: Record<string, ReturnType<typeof Type.String>>) => ({
  hide: true,
  body: Type.Object({ ...Csrf, ...props }, { additionalProperties: false }),
});
const optional = Type.Optional;

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in account of an account page request (set by the session hook). */
    sessionAccountId?: string;
  }
}

/**
 * The account pages (issue 16): sign-in by emailed link, sessions, and the server-rendered
 * account page with its forms. Every state-changing form is CSRF-protected; pages answer
 * HTML, also for their errors. Hidden from the OpenAPI document (not part of the API).
 */
export default async function accountPages(fastify: FastifyInstance): Promise<void> {
  await fastify.register(formbody);
  await fastify.register(multipart);
  const { config } = fastify;
  const secure = config.publicBaseUrl.startsWith('https://');
  const mailer = makeMailer(config.accounts.smtpUrl, config.accounts.mailFrom, fastify.log);
  const counter: RateCounter = config.redisUrl
    ? new RedisRateCounter(new Redis(config.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2_000 }))
    : new MemoryRateCounter();
  fastify.addHook('onClose', async () => {
    mailer.close();
    await counter.close();
  });

  const html = (reply: FastifyReply, status: number, body: string) =>
    reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body);

  fastify.setErrorHandler((err, request, reply) => {
    const e = err as { code?: string; statusCode?: number; validation?: unknown };
    if (e.code?.startsWith('FST_CSRF')) {
      request.log.info({ code: e.code }, 'account form refused: CSRF');
      return html(
        reply,
        403,
        messagePage(
          'Form expired',
          'The form has expired or did not come from this site: reload the page and try again.',
        ),
      );
    }
    if (err instanceof ApiError) return html(reply, err.status, messagePage('Not done', err.message));
    if (e.validation || e.statusCode === 400)
      return html(reply, 400, messagePage('Not done', 'The form was not filled in as expected.'));
    request.log.error({ err }, 'account page failed');
    return html(reply, 500, messagePage('Something went wrong', 'The request failed; please try again.'));
  });

  const cookieOpts = { signed: true, httpOnly: true, sameSite: 'lax' as const, secure, path: '/' };

  async function accountOf(request: FastifyRequest): Promise<string | undefined> {
    const raw = request.cookies[SESSION_COOKIE];
    if (!raw) return undefined;
    const unsigned = request.unsignCookie(raw);
    if (!unsigned.valid || !unsigned.value) return undefined;
    return sessionAccount(fastify.db, unsigned.value, config.now());
  }
  function sessionToken(request: FastifyRequest): string | undefined {
    const raw = request.cookies[SESSION_COOKIE];
    const unsigned = raw ? request.unsignCookie(raw) : undefined;
    return unsigned?.valid && unsigned.value ? unsigned.value : undefined;
  }
  /** preHandler of the signed-in forms: after the CSRF check, a live session. */
  const signedIn = async (request: FastifyRequest, reply: FastifyReply) => {
    const id = await accountOf(request);
    if (!id) return html(reply, 401, messagePage('Signed out', 'Your session has ended: sign in again.'));
    request.sessionAccountId = id;
  };
  const guarded = { preHandler: [fastify.csrfProtection, signedIn] };

  async function view(
    reply: FastifyReply,
    accountId: string,
    extra: Partial<AccountView> = {},
  ): Promise<AccountView> {
    const now = config.now();
    const sdb = selfDb(fastify.db);
    const a = await sdb
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', accountId)
      .executeTakeFirstOrThrow();
    const plan = isAccountPlan(a.plan) ? a.plan : 'free';
    const subject = { kind: 'account' as const, accountId, mode: 'live' as const, plan };
    const usage = await usageOf(fastify.db, subject, now);
    const period = periodOf(subject, now);
    const days = Math.round((period.end - period.start) / 86_400_000);
    const daily = new Array<number>(days).fill(0);
    const charges = await fastify.db
      .withTables<import('../store/billing-schema.js').BillingSchema>()
      .selectFrom('usage_charges')
      .select(['created_at', 'billed'])
      .where('subject', '=', accountId)
      .where('mode', '=', 'live')
      .where('period', '=', period.label)
      .execute();
    for (const c of charges) {
      const i = Math.floor((c.created_at - period.start) / 86_400_000);
      if (i >= 0 && i < days) daily[i] = (daily[i] ?? 0) + c.billed;
    }
    const keys = await sdb
      .selectFrom('api_keys')
      .select(['id', 'name', 'mode', 'prefix', 'created_at', 'last_used_at', 'revoked_at'])
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .limit(50)
      .execute();
    const invoices = await sdb
      .selectFrom('invoices')
      .select(['period', 'overage_pages', 'amount_cents'])
      .where('account_id', '=', accountId)
      .orderBy('period', 'desc')
      .limit(12)
      .execute();
    const jobs = await fastify.db
      .withTables<JobsSchema>()
      .selectFrom('jobs')
      .select(['id', 'kind', 'status', 'created_at', 'result'])
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .limit(10)
      .execute();
    return {
      csrf: reply.generateCsrf(),
      email: a.email,
      accountId,
      plan,
      planAtPeriodEnd: a.plan_at_period_end,
      periodEnd: a.period_end,
      holdReason: a.hold_reason,
      provider: fastify.payments.name,
      keys: keys.map((k) => ({
        id: k.id,
        name: k.name,
        mode: k.mode,
        prefix: k.prefix,
        createdAt: k.created_at,
        lastUsedAt: k.last_used_at,
        revokedAt: k.revoked_at,
      })),
      usage: {
        periodStart: usage.period.start,
        periodEnd: usage.period.end,
        pagesUsed: usage.pagesUsed,
        allowance: usage.allowance,
        creditPages: usage.creditPages,
        remaining: usage.remaining,
        overagePages: usage.overagePages,
      },
      daily,
      invoices: invoices.map((i) => ({ period: i.period, pages: i.overage_pages, cents: i.amount_cents })),
      terms: { version: TERMS_VERSION, acceptedAt: a.terms_accepted_at, current: acceptedCurrentTerms(a) },
      jobs: jobs.map((j) => ({
        id: j.id,
        kind: j.kind,
        status: j.status,
        createdAt: j.created_at,
        outputUrl: outputUrl(j.result, now),
      })),
      ...extra,
    };
  }
  const page = async (
    reply: FastifyReply,
    accountId: string,
    extra: Partial<AccountView> = {},
    status = 200,
  ) => html(reply, status, accountPage(await view(reply, accountId, extra)));

  tryItRoutes(fastify, { signedIn, html });

  fastify.get(
    '/account',
    { schema: { hide: true, querystring: Type.Object({ paid: optional(Type.String({ maxLength: 8 })) }) } },
    async (request, reply) => {
      const accountId = await accountOf(request);
      if (!accountId) return html(reply, 200, signInPage(reply.generateCsrf()));
      const paid = (request.query as { paid?: string }).paid !== undefined;
      return page(
        reply,
        accountId,
        paid ? { flash: 'Payment received: it shows here as soon as the provider confirms it.' } : {},
      );
    },
  );

  fastify.post(
    '/account/sign-in',
    { schema: form({ email: Type.String({ maxLength: 320 }) }), preHandler: fastify.csrfProtection },
    async (request, reply) => {
      const { email } = request.body as { email: string };
      const now = config.now();
      let link: { token: string; email: string };
      const window = Math.floor(now / SIGN_IN_LIMITS.windowMs);
      const prefix = `${config.rateLimitPrefix}signin:`;
      const ttl = SIGN_IN_LIMITS.windowMs + 5_000;
      const byAddress = await counter.hit(`${prefix}ip:${clientAddressGroup(request.ip)}:${window}`, ttl);
      const normal = email.trim().toLowerCase();
      const byEmail = await counter.hit(`${prefix}email:${normal}:${window}`, ttl);
      if (byAddress > SIGN_IN_LIMITS.perAddress || byEmail > SIGN_IN_LIMITS.perEmail) {
        const retry = Math.max(1, Math.ceil(((window + 1) * SIGN_IN_LIMITS.windowMs - now) / 1000));
        reply.header('retry-after', String(retry));
        return html(
          reply,
          429,
          messagePage(
            'Too many sign-in requests',
            `Too many sign-in mails were asked for: try again in ${Math.ceil(retry / 60)} minutes.`,
          ),
        );
      }
      try {
        link = await createSignInLink(fastify.db, email, now);
      } catch (err) {
        if (err instanceof ApiError)
          return html(reply, 400, signInPage(reply.generateCsrf(), { kind: 'alert', text: err.message }));
        throw err;
      }
      const url = `${config.publicBaseUrl}/account/link?token=${link.token}`;
      await mailer.send(
        link.email,
        'Your pdfedit sign-in link',
        `Sign in to pdfedit with this link (it works once, within 15 minutes):\n\n${url}\n\nIf you did not ask for it, ignore this mail.\n`,
      );
      return html(reply, 200, checkMailPage(link.email));
    },
  );

  fastify.get(
    '/account/link',
    { schema: { hide: true, querystring: Type.Object({ token: Type.String({ maxLength: 100 }) }) } },
    async (request, reply) => {
      const { token } = request.query as { token: string };
      // Not spent here: mail scanners open links; the button below spends it.
      const peek = await peekSignInLink(fastify.db, token, config.now());
      if (peek.status !== 'ok') return html(reply, 400, linkRefusedPage(peek.status));
      return html(reply, 200, confirmLinkPage(reply.generateCsrf(), token, peek.email));
    },
  );

  fastify.post(
    '/account/link',
    { schema: form({ token: Type.String({ maxLength: 100 }) }), preHandler: fastify.csrfProtection },
    async (request, reply) => {
      const { token } = request.body as { token: string };
      const now = config.now();
      const outcome = await consumeSignInLink(fastify.db, token, now);
      if (outcome.status !== 'ok') return html(reply, 400, linkRefusedPage(outcome.status));
      const session = await createSession(fastify.db, outcome.accountId, now);
      reply.setCookie(SESSION_COOKIE, session, { ...cookieOpts, maxAge: Math.floor(SESSION_TTL_MS / 1000) });
      return reply.redirect('/account', 303);
    },
  );

  fastify.post(
    '/account/sign-out',
    { schema: form({}), preHandler: fastify.csrfProtection },
    async (request, reply) => {
      const token = sessionToken(request);
      if (token) await endSession(fastify.db, token);
      reply.clearCookie(SESSION_COOKIE, cookieOpts);
      return reply.redirect('/account', 303);
    },
  );

  fastify.post(
    '/account/keys',
    {
      schema: form({
        mode: Type.Union([Type.Literal('live'), Type.Literal('test')]) as never,
        name: optional(Type.String({ maxLength: 64 })) as never,
      }),
      ...guarded,
    },
    async (request, reply) => {
      const accountId = request.sessionAccountId!;
      const { mode, name } = request.body as { mode: 'live' | 'test'; name?: string };
      const label = name?.trim() ? name.trim() : null;
      const created = await createKey(fastify.db, accountId, mode);
      if (label)
        await selfDb(fastify.db)
          .updateTable('api_keys')
          .set({ name: label })
          .where('id', '=', created.keyId)
          .execute();
      return page(reply, accountId, { newKey: { key: created.key, name: label } });
    },
  );

  fastify.post(
    '/account/keys/revoke',
    { schema: form({ key_id: Type.String({ maxLength: 64 }) }), ...guarded },
    async (request, reply) => {
      const accountId = request.sessionAccountId!;
      const { key_id } = request.body as { key_id: string };
      const sdb = selfDb(fastify.db);
      const key = await sdb
        .selectFrom('api_keys')
        .select(['id', 'revoked_at'])
        .where('id', '=', key_id)
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      // Another account's key is invisible: 404, nothing revoked.
      if (!key) return html(reply, 404, messagePage('No such key', 'This account has no key with that id.'));
      await sdb
        .updateTable('api_keys')
        .set({ revoked_at: config.now() })
        .where('id', '=', key.id)
        .where('account_id', '=', accountId)
        .where('revoked_at', 'is', null)
        .execute();
      return page(reply, accountId, { flash: 'The key is revoked: it answers 401 from now on.' });
    },
  );

  fastify.post(
    '/account/terms',
    { schema: form({ accept: Type.Literal('yes') as never }), ...guarded },
    async (request, reply) => {
      const accountId = request.sessionAccountId!;
      await fastify.db
        .updateTable('accounts')
        .set({ terms_accepted_at: config.now(), terms_version: TERMS_VERSION })
        .where('id', '=', accountId)
        .execute();
      return page(reply, accountId, {
        flash: `You accepted the document-integrity terms, version ${TERMS_VERSION}.`,
      });
    },
  );

  fastify.post(
    '/account/webhook-secret',
    {
      schema: form({ action: Type.Union([Type.Literal('reveal'), Type.Literal('rotate')]) as never }),
      ...guarded,
    },
    async (request, reply) => {
      const accountId = request.sessionAccountId!;
      const { action } = request.body as { action: 'reveal' | 'rotate' };
      const secret =
        action === 'rotate'
          ? await rotateWebhookSecret(fastify.db, accountId)
          : await getWebhookSecret(fastify.db, accountId);
      return page(reply, accountId, {
        webhookSecret: secret,
        flash:
          action === 'rotate' ? 'A new webhook secret is in force; the old one no longer signs.' : undefined,
      });
    },
  );

  fastify.post(
    '/account/checkout',
    {
      schema: form({
        plan: optional(Type.String({ maxLength: 16 })) as never,
        pack: optional(Type.String({ maxLength: 16 })) as never,
      }),
      ...guarded,
    },
    async (request, reply) => {
      const accountId = request.sessionAccountId!;
      const item = checkoutItem(request.body as { plan?: string; pack?: string });
      const c = await startCheckout(fastify.db, fastify.payments, accountId, item, config.now());
      return reply.redirect(c.url, 303);
    },
  );

  fastify.post('/account/plan/cancel', { schema: form({}), ...guarded }, async (request, reply) => {
    const accountId = request.sessionAccountId!;
    const now = config.now();
    const a = await selfDb(fastify.db)
      .selectFrom('accounts')
      .select(['plan', 'provider_subscription', 'provider_customer', 'period_end'])
      .where('id', '=', accountId)
      .executeTakeFirstOrThrow();
    if (a.plan === 'free') return page(reply, accountId, { flash: 'The account is on the free plan.' });
    if (fastify.payments.name === 'local') {
      // The local provider answers for itself with the event Stripe would send.
      await postLocalEvents(fastify, [
        localEvent(
          'customer.subscription.updated',
          {
            id: a.provider_subscription ?? `sub_local_none_${accountId}`,
            customer: a.provider_customer,
            cancel_at_period_end: true,
            current_period_end: Math.floor((a.period_end ?? now) / 1000),
            metadata: { account_id: accountId, plan: a.plan },
          },
          now,
        ),
      ]);
    } else if (a.provider_subscription) {
      // Stripe confirms with customer.subscription.updated, then .deleted at the period end.
      await fastify.payments.cancelAtPeriodEnd(a.provider_subscription, accountId, now);
    } else {
      // A plan set by an operator, with nothing to cancel at the provider.
      await selfDb(fastify.db)
        .updateTable('accounts')
        .set({ plan_at_period_end: 'free', period_end: a.period_end ?? now })
        .where('id', '=', accountId)
        .execute();
    }
    return page(reply, accountId, {
      flash: 'The plan is cancelled: it returns to free at the end of the paid period.',
    });
  });

  fastify.post(
    '/account/close',
    { schema: form({ confirm: Type.String({ maxLength: 320 }) }), ...guarded },
    async (request, reply) => {
      const accountId = request.sessionAccountId!;
      const { confirm } = request.body as { confirm: string };
      const a = await selfDb(fastify.db)
        .selectFrom('accounts')
        .select(['email', 'provider_subscription'])
        .where('id', '=', accountId)
        .executeTakeFirstOrThrow();
      if (confirm.trim().toLowerCase() !== a.email)
        return page(
          reply,
          accountId,
          { flash: 'The address typed does not match: the account stays open.' },
          400,
        );
      if (a.provider_subscription && fastify.payments.name !== 'local')
        await fastify.payments.cancelNow(a.provider_subscription, accountId, config.now());
      await closeAccount(fastify.db, fastify.blobs, accountId, config.now());
      reply.clearCookie(SESSION_COOKIE, cookieOpts);
      return html(
        reply,
        200,
        layout(
          'Account closed',
          '<p class="notice" role="status">Your account is closed: keys revoked, files deleted, the email address freed.</p><p><a href="/account">Sign in or create an account</a></p>',
        ),
      );
    },
  );
}

/** The output link of a finished job, while it lasts. */
function outputUrl(result: string | null, now: number): string | null {
  if (!result) return null;
  try {
    const r = JSON.parse(result) as { output?: { url?: unknown; expires_at?: unknown } };
    const url = r.output?.url;
    const exp = r.output?.expires_at;
    if (typeof url !== 'string' || typeof exp !== 'string' || Date.parse(exp) <= now) return null;
    return url;
  } catch {
    return null;
  }
}

function linkRefusedPage(status: 'invalid' | 'expired' | 'used'): string {
  const why = {
    invalid: 'This sign-in link is not valid.',
    expired: 'This sign-in link has expired.',
    used: 'This sign-in link was used already.',
  }[status];
  return messagePage('Sign-in link refused', `${why} Ask for a new one.`);
}

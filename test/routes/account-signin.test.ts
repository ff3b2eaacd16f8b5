import type { FastifyBaseLogger } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer, serverOptions } from '../../src/app.js';
import { createSignInLink } from '../../src/domain/sign-in.js';
import { makeMailer } from '../../src/net/mail.js';
import { SESSION_COOKIE, SIGN_IN_LIMITS } from '../../src/routes/account-pages.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { csrfOf, type Mailbox, PageClient, signIn, startMailbox } from '../helpers/pages.js';

let t: TestApp;
let mailbox: Mailbox;

beforeAll(async () => {
  mailbox = await startMailbox();
  t = await startApp('sqlite', { SMTP_URL: mailbox.url });
});

afterAll(async () => {
  await t?.close();
  await mailbox?.close();
});

async function accountCount(): Promise<number> {
  const r = await t.app.db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

describe('sign-in by emailed link', () => {
  it('mails a single-use link that opens a session with a HttpOnly, SameSite=Lax cookie', async () => {
    const c = new PageClient(t.app);
    const form = await c.get('/account');
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('<label for="email">');
    const sent = await c.post('/account/sign-in', { _csrf: csrfOf(form.body), email: ' Ann@Example.COM ' });
    expect(sent.statusCode).toBe(200);
    expect(sent.body).toContain('ann@example.com');
    const link = new URL(await mailbox.nextLink('ann@example.com'));
    expect(link.origin).toBe('http://127.0.0.1:8080');
    const token = link.searchParams.get('token')!;
    // Opening the link does not spend it (mail scanners open links): the button does.
    const confirm = await c.get(`/account/link?token=${token}`);
    expect(confirm.statusCode).toBe(200);
    // The page names the account the link signs in to (a link someone else mailed shows itself).
    expect(confirm.body).toContain('signs you in as <strong>ann@example.com</strong>');
    const done = await c.post('/account/link', { _csrf: csrfOf(confirm.body), token });
    expect(done.statusCode).toBe(303);
    const setCookie = ([] as string[])
      .concat(done.headers['set-cookie'] as string[])
      .find((s) => s.startsWith(`${SESSION_COOKIE}=`))!;
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).not.toMatch(/Secure/); // http base URL here
    const page = await c.get('/account');
    expect(page.body).toContain('Signed in as <strong>ann@example.com</strong>');
    // The link stored hashed only.
    const rows = await t.app.db
      .withTables<{ sign_in_links: { token_hash: string } }>()
      .selectFrom('sign_in_links')
      .select('token_hash')
      .execute();
    expect(rows.some((r) => r.token_hash.includes(token))).toBe(false);

    // Reused: refused, no second session.
    const again = new PageClient(t.app);
    const confirm2 = await again.get(`/account/link?token=${token}`);
    expect(confirm2.statusCode).toBe(400);
    expect(confirm2.body).toContain('used already');
    const form2 = await again.get('/account');
    const reused = await again.post('/account/link', { _csrf: csrfOf(form2.body), token });
    expect(reused.statusCode).toBe(400);
    expect(reused.body).toContain('used already');
    expect(again.cookies.has(SESSION_COOKIE)).toBe(false);
  });

  it('keeps one account per email, case-folded', async () => {
    const before = await accountCount();
    await signIn(new PageClient(t.app), mailbox, 'case@example.com');
    await signIn(new PageClient(t.app), mailbox, 'CASE@Example.com');
    expect(await accountCount()).toBe(before + 1);
  });

  it('refuses an expired link', async () => {
    const now = Date.now();
    const { token } = await createSignInLink(t.app.db, 'late@example.com', now - 16 * 60 * 1000);
    const c = new PageClient(t.app);
    const confirm = await c.get(`/account/link?token=${token}`);
    expect(confirm.statusCode).toBe(400);
    expect(confirm.body).toContain('expired');
    const form = await c.get('/account');
    const res = await c.post('/account/link', { _csrf: csrfOf(form.body), token });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('expired');
    expect(c.cookies.has(SESSION_COOKIE)).toBe(false);
  });

  it('refuses a forged link', async () => {
    const c = new PageClient(t.app);
    for (const token of ['A'.repeat(43), 'not-a-token', `${'b'.repeat(42)}!`]) {
      const confirm = await c.get(`/account/link?token=${encodeURIComponent(token)}`);
      expect(confirm.statusCode).toBe(400);
      expect(confirm.body).toContain('not valid');
      const form = await c.get('/account');
      const res = await c.post('/account/link', { _csrf: csrfOf(form.body), token });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('not valid');
    }
    expect(c.cookies.has(SESSION_COOKIE)).toBe(false);
  });

  it('refuses a form without its CSRF token, or with a forged one', async () => {
    const c = new PageClient(t.app);
    await c.get('/account');
    const missing = await c.post('/account/sign-in', { email: 'csrf@example.com' });
    expect(missing.statusCode).toBe(403);
    const forged = await c.post('/account/sign-in', { _csrf: 'forged-token', email: 'csrf@example.com' });
    expect(forged.statusCode).toBe(403);
    // Without the CSRF cookie (another site's form) the token of a page is not enough.
    const page = await c.get('/account');
    const stranger = new PageClient(t.app);
    const cross = await stranger.post('/account/sign-in', {
      _csrf: csrfOf(page.body),
      email: 'csrf@example.com',
    });
    expect(cross.statusCode).toBe(403);
    expect(mailbox.mails.some((m) => m.to === 'csrf@example.com')).toBe(false);
    // A signed-in form too: a key is not created without the token.
    const signed = new PageClient(t.app);
    await signIn(signed, mailbox, 'csrf2@example.com');
    const res = await signed.post('/account/keys', { mode: 'live' });
    expect(res.statusCode).toBe(403);
    const keys = await t.app.db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .select('api_keys.id')
      .where('accounts.email', '=', 'csrf2@example.com')
      .execute();
    expect(keys).toHaveLength(0);
  });

  it('treats a tampered session cookie as signed out', async () => {
    const c = new PageClient(t.app);
    await signIn(c, mailbox, 'tamper@example.com');
    const good = c.cookies.get(SESSION_COOKIE)!;
    const [value, sig] = decodeURIComponent(good).split('.');
    for (const bad of [
      `${value!.slice(0, -1)}${value!.endsWith('A') ? 'B' : 'A'}.${sig}`,
      `${value}.${sig!.slice(0, -1)}${sig!.endsWith('A') ? 'B' : 'A'}`,
      value!,
      'garbage',
    ]) {
      c.cookies.set(SESSION_COOKIE, encodeURIComponent(bad));
      const page = await c.get('/account');
      expect(page.body).not.toContain('tamper@example.com');
      expect(page.body).toContain('Email me a sign-in link');
    }
  });

  it('ends the session on sign-out', async () => {
    const c = new PageClient(t.app);
    const page = await signIn(c, mailbox, 'out@example.com');
    const cookie = c.cookies.get(SESSION_COOKIE)!;
    const res = await c.post('/account/sign-out', { _csrf: csrfOf(page.body) });
    expect(res.statusCode).toBe(303);
    // Even a copy of the cookie no longer signs in.
    const thief = new PageClient(t.app);
    thief.cookies.set(SESSION_COOKIE, cookie);
    expect((await thief.get('/account')).body).not.toContain('out@example.com');
  });

  it('rate-limits sign-in mails per email and per address', async () => {
    // A fresh service: the tests above spent part of this address's budget.
    const fresh = await startApp('sqlite', { SMTP_URL: mailbox.url });
    const c = new PageClient(fresh.app);
    const page = await c.get('/account');
    const csrf = csrfOf(page.body);
    const codes: number[] = [];
    for (let i = 0; i < SIGN_IN_LIMITS.perEmail + 1; i++)
      codes.push((await c.post('/account/sign-in', { _csrf: csrf, email: 'flood@example.com' })).statusCode);
    expect(codes.slice(0, SIGN_IN_LIMITS.perEmail).every((s) => s === 200)).toBe(true);
    const last = await c.post('/account/sign-in', { _csrf: csrf, email: 'Flood@example.com' });
    expect(last.statusCode).toBe(429);
    expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);
    // Per address: other emails from the same address run out too.
    let limited = false;
    for (let i = 0; i < SIGN_IN_LIMITS.perAddress + 1 && !limited; i++)
      limited =
        (await c.post('/account/sign-in', { _csrf: csrf, email: `many${i}@example.com` })).statusCode === 429;
    expect(limited).toBe(true);
    await fresh.close();
  });

  it('refuses an invalid address on the page', async () => {
    const fresh = await startApp('sqlite', { SMTP_URL: mailbox.url });
    try {
      const c = new PageClient(fresh.app);
      const page = await c.get('/account');
      const res = await c.post('/account/sign-in', { _csrf: csrfOf(page.body), email: 'not an address' });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('not a valid email address');
    } finally {
      await fresh.close();
    }
  });
});

describe('sign-in cookie behind TLS', () => {
  it('marks the session cookie Secure when PUBLIC_BASE_URL is https', async () => {
    const box = await startMailbox();
    const s = await startApp('sqlite', { SMTP_URL: box.url, PUBLIC_BASE_URL: 'https://pdf.example.com' });
    try {
      const c = new PageClient(s.app);
      const form = await c.get('/account');
      await c.post('/account/sign-in', { _csrf: csrfOf(form.body), email: 'tls@example.com' });
      const link = new URL(await box.nextLink('tls@example.com'));
      expect(link.origin).toBe('https://pdf.example.com');
      const token = link.searchParams.get('token')!;
      const confirm = await c.get(`/account/link?token=${token}`);
      const done = await c.post('/account/link', { _csrf: csrfOf(confirm.body), token });
      const setCookie = ([] as string[])
        .concat(done.headers['set-cookie'] as string[])
        .find((x) => x.startsWith(`${SESSION_COOKIE}=`))!;
      expect(setCookie).toMatch(/; Secure/);
    } finally {
      await s.close();
      await box.close();
    }
  });
});

describe('sign-in mail without SMTP_URL (embedded mode)', () => {
  it('writes the message with its link to the log instead', async () => {
    const logged: unknown[] = [];
    const log = { warn: (obj: unknown) => logged.push(obj) } as unknown as FastifyBaseLogger;
    const mailer = makeMailer(undefined, 'pdfedit <no-reply@localhost>', log);
    await mailer.send(
      'x@example.com',
      'Your pdfedit sign-in link',
      'link: http://127.0.0.1:8080/account/link?token=abc',
    );
    expect(logged).toEqual([
      {
        to: 'x@example.com',
        subject: 'Your pdfedit sign-in link',
        text: 'link: http://127.0.0.1:8080/account/link?token=abc',
      },
    ]);
  });
});

describe('request logs', () => {
  it('never carry the token of a sign-in link', async () => {
    const lines: string[] = [];
    const stream = { write: (line: string) => lines.push(line) };
    const base = serverOptions(t.env.config).logger as Record<string, unknown>;
    const app = await buildServer(t.env.config, { logger: { ...base, level: 'info', stream } });
    try {
      const { token } = await createSignInLink(app.db, 'logs@example.com', Date.now());
      const res = await app.inject({ method: 'GET', url: `/account/link?token=${token}&x=1` });
      expect(res.statusCode).toBe(200);
      const text = lines.join('');
      expect(text).toContain('/account/link?token=[redacted]&x=1');
      expect(text).not.toContain(token);
    } finally {
      await app.close();
    }
  });
});

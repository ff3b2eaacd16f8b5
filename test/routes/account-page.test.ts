import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { charge } from '../../src/billing/meter.js';
import { getWebhookSecret } from '../../src/domain/accounts.js';
import { createKey } from '../../src/domain/api-keys.js';
import { TERMS_VERSION } from '../../src/domain/terms.js';
import { SESSION_COOKIE } from '../../src/routes/account-pages.js';
import type { JobsSchema } from '../../src/store/jobs-schema.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import { DB_KINDS } from '../helpers/env.js';
import { csrfOf, type Mailbox, PageClient, signIn, startMailbox } from '../helpers/pages.js';

let t: TestApp;
let mailbox: Mailbox;

const accountIdOf = async (email: string) =>
  (await t.app.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow())
    .id;

describe.each(DB_KINDS)('the account page (%s)', (kind) => {
  beforeAll(async () => {
    mailbox = await startMailbox();
    t = await startApp(kind, { SMTP_URL: mailbox.url });
  });

  afterAll(async () => {
    await t?.close();
    await mailbox?.close();
  });

  it('creates named live and test keys, shows each once, and a revoked key answers 401 at once', async () => {
    const c = new PageClient(t.app);
    const page = await signIn(c, mailbox, 'keys@example.com');
    const made = await c.post('/account/keys', {
      _csrf: csrfOf(page.body),
      mode: 'live',
      name: 'CI <server>',
    });
    expect(made.statusCode).toBe(200);
    const key = /<code id="new-key" class="secret">(sk_live_[0-9A-Za-z]+)<\/code>/.exec(made.body)?.[1];
    expect(key).toBeDefined();
    expect(made.body).toContain('CI &lt;server&gt;'); // escaped
    expect(made.body).toContain('Copy key');
    // Shown once: the next page has only its prefix.
    const later = await c.get('/account');
    expect(later.body).not.toContain(key!);
    expect(later.body).toContain(`${key!.slice(0, 12)}…`);
    const test = await c.post('/account/keys', { _csrf: csrfOf(later.body), mode: 'test' });
    expect(/sk_test_[0-9A-Za-z]+/.exec(test.body)).not.toBeNull();

    const usage = await t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(key!) });
    expect(usage.statusCode).toBe(200);
    const row = await t.app.db
      .selectFrom('api_keys')
      .select(['id', 'last_used_at'])
      .where('prefix', '=', key!.slice(0, 12))
      .executeTakeFirstOrThrow();
    expect(row.last_used_at).not.toBeNull();

    const revoked = await c.post('/account/keys/revoke', { _csrf: csrfOf(test.body), key_id: row.id });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.body).toContain('revoked');
    const after = await t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(key!) });
    expect(after.statusCode).toBe(401);
  });

  it("answers 404 for another account's key id and revokes nothing", async () => {
    const otherAccount = await t.app.db.selectFrom('accounts').select('id').executeTakeFirst();
    const victim = await t.newKey('victim@example.com', 'free', 'live');
    const victimId = (
      await t.app.db
        .selectFrom('api_keys')
        .select('id')
        .where('prefix', '=', victim.slice(0, 12))
        .executeTakeFirstOrThrow()
    ).id;
    expect(otherAccount).toBeDefined();
    const c = new PageClient(t.app);
    const page = await signIn(c, mailbox, 'attacker@example.com');
    const res = await c.post('/account/keys/revoke', { _csrf: csrfOf(page.body), key_id: victimId });
    expect(res.statusCode).toBe(404);
    expect(
      (await t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(victim) })).statusCode,
    ).toBe(200);
  });

  it('shows the usage of the period as GET /v1/usage does, with a chart of pages per day', async () => {
    const c = new PageClient(t.app);
    await signIn(c, mailbox, 'usage@example.com');
    const id = await accountIdOf('usage@example.com');
    const key = (await createKey(t.app.db, id, 'live')).key;
    const now = Date.now();
    await charge(
      t.app.db,
      { kind: 'account', accountId: id, mode: 'live', plan: 'free' },
      'req_a',
      7,
      {},
      now,
    );
    await charge(
      t.app.db,
      { kind: 'account', accountId: id, mode: 'live', plan: 'free' },
      'req_b',
      5,
      {},
      now,
    );
    const api = (await t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(key) })).json();
    const page = (await c.get('/account')).body;
    expect(page).toContain(`<dd id="pages-used">${api.pages_used}</dd>`);
    expect(api.pages_used).toBe(12);
    expect(page).toContain(`<dd>${api.remaining}</dd>`);
    expect(page).toMatch(/<svg role="img"[^>]*aria-labelledby="chart-title chart-desc"/);
    expect(page).toContain(`${new Date(now).toISOString().slice(0, 10)}: 12 pages`);
    expect(page).toContain('12 pages this period');
  });

  it('records the acceptance of the terms with time and version', async () => {
    const c = new PageClient(t.app);
    const page = await signIn(c, mailbox, 'terms@example.com');
    expect(page.body).toContain('I accept the document-integrity terms');
    const before = Date.now();
    const res = await c.post('/account/terms', { _csrf: csrfOf(page.body), accept: 'yes' });
    expect(res.statusCode).toBe(200);
    const row = await t.app.db
      .selectFrom('accounts')
      .select(['terms_accepted_at', 'terms_version'])
      .where('email', '=', 'terms@example.com')
      .executeTakeFirstOrThrow();
    expect(row.terms_version).toBe(TERMS_VERSION);
    expect(row.terms_accepted_at).toBeGreaterThanOrEqual(before);
    expect(res.body).toContain(`You accepted version ${TERMS_VERSION}`);
  });

  it('reveals and rotates the webhook secret the jobs sign with', async () => {
    const c = new PageClient(t.app);
    const page = await signIn(c, mailbox, 'hooks@example.com');
    expect(page.body).not.toContain('whsec_');
    const id = await accountIdOf('hooks@example.com');
    const shown = await c.post('/account/webhook-secret', { _csrf: csrfOf(page.body), action: 'reveal' });
    const old = await getWebhookSecret(t.app.db, id);
    expect(shown.body).toContain(old!);
    const rotated = await c.post('/account/webhook-secret', { _csrf: csrfOf(shown.body), action: 'rotate' });
    const fresh = await getWebhookSecret(t.app.db, id);
    expect(fresh).not.toBe(old);
    expect(rotated.body).toContain(fresh!);
    expect(rotated.body).not.toContain(old!);
  });

  it('closes the account: keys revoked, session ended, files deleted, email freed', async () => {
    const c = new PageClient(t.app);
    const page = await signIn(c, mailbox, 'leaver@example.com');
    const id = await accountIdOf('leaver@example.com');
    const key = (await createKey(t.app.db, id, 'live')).key;
    const reserved = await t.app.inject({
      method: 'POST',
      url: '/v1/files',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      payload: {},
    });
    expect(reserved.statusCode).toBe(200);
    // A wrong confirmation keeps it open.
    const wrong = await c.post('/account/close', {
      _csrf: csrfOf(page.body),
      confirm: 'someone@example.com',
    });
    expect(wrong.statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(key) })).statusCode).toBe(
      200,
    );
    const closed = await c.post('/account/close', {
      _csrf: csrfOf(wrong.body),
      confirm: 'Leaver@example.com',
    });
    expect(closed.statusCode).toBe(200);
    expect(closed.body).toContain('Your account is closed');
    expect((await t.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(key) })).statusCode).toBe(
      401,
    );
    const files = await t.app.db
      .withTables<{ files: { account_id: string; deleted_at: number | null } }>()
      .selectFrom('files')
      .select('deleted_at')
      .where('account_id', '=', id)
      .execute();
    expect(files.length).toBeGreaterThan(0);
    expect(files.every((f) => f.deleted_at !== null)).toBe(true);
    expect(c.cookies.has(SESSION_COOKIE)).toBe(false);
    // The email is free: signing in again makes a new account.
    await signIn(new PageClient(t.app), mailbox, 'leaver@example.com');
    expect(await accountIdOf('leaver@example.com')).not.toBe(id);
  });

  it('lists recent jobs with status and their output link while it lasts', async () => {
    const c = new PageClient(t.app);
    await signIn(c, mailbox, 'jobs@example.com');
    const id = await accountIdOf('jobs@example.com');
    const now = Date.now();
    const job = (jobId: string, status: string, result: unknown, created: number) => ({
      id: jobId,
      account_id: id,
      mode: 'live' as const,
      plan: 'free',
      kind: 'edit' as const,
      status: status as 'done',
      request: '{}',
      webhook_url: null,
      owner: null,
      lease_until: 0,
      attempts: 1,
      progress_total: 1,
      pages_billed: 1,
      changes_count: 1,
      result: result === null ? null : JSON.stringify(result),
      created_at: created,
      started_at: created,
      finished_at: created,
      expires_at: now + 86_400_000,
    });
    const jobs = t.app.db.withTables<JobsSchema>();
    await jobs
      .insertInto('jobs')
      .values([
        job(
          'job_fresh',
          'done',
          {
            output: {
              url: 'http://127.0.0.1:8080/v1/files/file_a?token=t1',
              expires_at: new Date(now + 3_600_000).toISOString(),
            },
          },
          now - 1000,
        ),
        job(
          'job_stale',
          'done',
          {
            output: {
              url: 'http://127.0.0.1:8080/v1/files/file_b?token=t2',
              expires_at: new Date(now - 1000).toISOString(),
            },
          },
          now - 2000,
        ),
        job('job_wait', 'queued', null, now - 3000),
      ])
      .execute();
    const page = (await c.get('/account')).body;
    expect(page).toContain('job_fresh');
    expect(page).toContain('href="http://127.0.0.1:8080/v1/files/file_a?token=t1"');
    expect(page).toContain('job_stale');
    expect(page).not.toContain('file_b');
    expect(page).toMatch(
      /job_wait<\/code><\/td><td data-label="Kind">edit<\/td><td data-label="Status">queued/,
    );
    // Newest first.
    expect(page.indexOf('job_fresh')).toBeLessThan(page.indexOf('job_wait'));
  });

  it('refuses Try it without the CSRF token', async () => {
    const c = new PageClient(t.app);
    await signIn(c, mailbox, 'try@example.com');
    const boundary = 'xxBOUNDARYxx';
    const body = [
      `--${boundary}`,
      'Content-Disposition: form-data; name="find"',
      '',
      'a',
      `--${boundary}--`,
      '',
    ].join('\r\n');
    const res = await t.app.inject({
      method: 'POST',
      url: '/account/try',
      headers: {
        cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      payload: body,
    });
    expect(res.statusCode).toBe(403);
  });
});

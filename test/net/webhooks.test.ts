import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ensureAccount, getWebhookSecret } from '../../src/domain/accounts.js';
import { jobsDb } from '../../src/domain/jobs.js';
import { postOnce, RETRY_DELAYS_MS, signWebhook } from '../../src/net/webhooks.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import { corpusPath, pdftotextAvailable } from '../helpers/corpus.js';
import { DB_KINDS, HAVE_CORPUS } from '../helpers/env.js';
import { waitForJob } from '../helpers/jobs.js';
import { type FileServer, serveFiles } from '../helpers/serve.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';

interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A loopback receiver: records every request; `answer` decides each reply. */
async function receiver(answer: (req: Seen, res: ServerResponse, n: number) => void) {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      seen.push(s);
      answer(s, res, seen.length);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    seen,
    url: (p = '/hook') => `http://127.0.0.1:${port}${p}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** What a receiver does: constant-time HMAC checks over the exact bytes received. */
function verify(secret: string, s: Seen): { plain: boolean; timestamped: boolean } {
  const eq = (a: string, b: string) =>
    a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
  const plain = createHmac('sha256', secret).update(s.body).digest('hex');
  const id = String(s.headers['webhook-id']);
  const ts = String(s.headers['webhook-timestamp']);
  const stamped = createHmac('sha256', secret).update(`${id}.${ts}.${s.body}`).digest('hex');
  return {
    plain: eq(String(s.headers['x-signature']), plain),
    timestamped: eq(String(s.headers['webhook-signature']), `v1,${stamped}`),
  };
}

describe('webhook delivery (postOnce)', () => {
  const headers = signWebhook('whsec_test', 'msg_1', 1_700_000_000, '{}');
  const opts = { timeoutMs: 500, allowPrivate: true };

  it('signs the body and "id.timestamp.body"', () => {
    const h = signWebhook('whsec_test', 'msg_1', 1_700_000_000, '{"a":1}');
    expect(h['x-signature']).toBe(createHmac('sha256', 'whsec_test').update('{"a":1}').digest('hex'));
    expect(h['webhook-signature']).toBe(
      `v1,${createHmac('sha256', 'whsec_test').update('msg_1.1700000000.{"a":1}').digest('hex')}`,
    );
    expect(h['webhook-id']).toBe('msg_1');
    expect(h['webhook-timestamp']).toBe('1700000000');
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const r = await receiver((s, res) =>
      s.path === '/hook' ? res.writeHead(302, { location: '/elsewhere' }).end() : res.writeHead(200).end(),
    );
    try {
      const out = await postOnce(r.url(), headers, '{}', opts);
      expect(out).toMatchObject({ ok: false, status: 302 });
      expect(r.seen.map((s) => s.path)).toEqual(['/hook']);
    } finally {
      await r.close();
    }
  });

  it('gives up on a receiver that does not answer within the time-out', async () => {
    const r = await receiver(() => {
      /* never answers */
    });
    try {
      const t0 = Date.now();
      const out = await postOnce(r.url(), headers, '{}', opts);
      expect(out.ok).toBe(false);
      expect(out.error).toContain('500 ms');
      expect(Date.now() - t0).toBeLessThan(3_000);
    } finally {
      await r.close();
    }
  });

  it('reads no more than a small part of a huge answer', async () => {
    const r = await receiver((_, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 120);
      let sent = 0;
      const pump = () => {
        while (sent < 200 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    try {
      const t0 = Date.now();
      const out = await postOnce(r.url(), headers, '{}', { timeoutMs: 10_000, allowPrivate: true });
      expect(out).toMatchObject({ ok: true, status: 200 });
      expect(Date.now() - t0).toBeLessThan(5_000);
    } finally {
      await r.close();
    }
  });

  it('refuses loopback and private addresses unless private URLs are allowed', async () => {
    const r = await receiver((_, res) => res.writeHead(200).end());
    try {
      const out = await postOnce(r.url(), headers, '{}', { timeoutMs: 2_000, allowPrivate: false });
      expect(out.ok).toBe(false);
      expect(r.seen).toHaveLength(0);
      const meta = await postOnce('http://169.254.169.254/latest', headers, '{}', opts);
      expect(meta.ok).toBe(false);
    } finally {
      await r.close();
    }
  });
});

describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable()).each(DB_KINDS)('job.done webhooks (%s)', (kind) => {
  let t: TestApp;
  let key: string;
  let files: FileServer;
  beforeAll(async () => {
    // The poll is off (an hour): the tests drive delivery with deliverDue() and a moved clock.
    t = await startApp(kind, {
      ALLOW_PRIVATE_URLS: '1',
      WEBHOOK_POLL_MS: '3600000',
      WORKER_GRACE_MS: '2000',
    });
    key = await t.newKey('hooks@example.com');
    files = await serveFiles({ [INVOICE]: corpusPath(INVOICE) });
  });
  afterAll(async () => {
    t.env.config.now = Date.now;
    await files?.close();
    await t?.close();
  });

  async function editWithHook(url: string) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/edit',
      headers: bearer(key),
      payload: {
        source: { url: files.url(INVOICE) },
        edits: [{ find: 'Bayside Wholesale', replace: 'Baysider Wholesale' }],
        options: { webhook_url: url },
      },
    });
    expect(res.statusCode, res.body).toBe(202);
    return waitForJob(t.app, key, res.json().job_id);
  }

  it('POSTs the signed job.done with the job result; both signatures check out', async () => {
    const r = await receiver((_, res) => res.writeHead(204).end());
    try {
      const job = await editWithHook(r.url());
      expect(await t.app.jobs.webhooks.deliverDue()).toBe(1);
      expect(r.seen).toHaveLength(1);
      const s = r.seen[0]!;
      expect(s.headers['content-type']).toBe('application/json');
      const account = await ensureAccount(t.app.db, 'hooks@example.com', 'free');
      const secret = (await getWebhookSecret(t.app.db, account.id))!;
      expect(verify(secret, s)).toEqual({ plain: true, timestamped: true });
      expect(verify('whsec_wrong', s)).toEqual({ plain: false, timestamped: false });
      const body = JSON.parse(s.body);
      expect(body).toMatchObject({ event: 'job.done', job_id: job.job_id, status: 'done' });
      for (const member of ['changes', 'unmatched', 'failed', 'warnings', 'output', 'usage'])
        expect(body, member).toHaveProperty(member);
      expect(body.changes).toEqual(job.changes);
      expect(Math.abs(Number(s.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(await t.app.jobs.webhooks.deliverDue()).toBe(0);
    } finally {
      await r.close();
    }
  });

  it('retries a failing receiver after 1 and 5 minutes: exactly 3 deliveries, same id and body', async () => {
    const r = await receiver((_, res, n) => res.writeHead(n <= 2 ? 500 : 200).end());
    let clock = Date.now();
    t.env.config.now = () => clock;
    try {
      await editWithHook(r.url());
      const deliver = () => t.app.jobs.webhooks.deliverDue();
      expect(await deliver()).toBe(1); // attempt 1: 500
      expect(await deliver()).toBe(0);
      clock += RETRY_DELAYS_MS[0] - 1_000;
      expect(await deliver()).toBe(0);
      clock += 1_000;
      expect(await deliver()).toBe(1); // attempt 2 at +1 min: 500
      clock += RETRY_DELAYS_MS[1] - 1_000;
      expect(await deliver()).toBe(0);
      clock += 1_000;
      expect(await deliver()).toBe(1); // attempt 3 at +6 min: 200
      clock += RETRY_DELAYS_MS[2] * 2;
      expect(await deliver()).toBe(0);
      expect(r.seen).toHaveLength(3);
      expect(new Set(r.seen.map((s) => s.headers['webhook-id'])).size).toBe(1);
      expect(new Set(r.seen.map((s) => s.body)).size).toBe(1);
      const stamps = r.seen.map((s) => Number(s.headers['webhook-timestamp']));
      expect(stamps[1]! - stamps[0]!).toBe(60);
      expect(stamps[2]! - stamps[1]!).toBe(300);
    } finally {
      t.env.config.now = Date.now;
      await r.close();
    }
  });

  it('gives up after the 30-minute retry (4 attempts in all)', async () => {
    const r = await receiver((_, res) => res.writeHead(503).end());
    let clock = Date.now();
    t.env.config.now = () => clock;
    try {
      const job = await editWithHook(r.url());
      for (const wait of [0, ...RETRY_DELAYS_MS, RETRY_DELAYS_MS[2]]) {
        clock += wait;
        await t.app.jobs.webhooks.deliverDue();
      }
      expect(r.seen).toHaveLength(4);
      const row = await jobsDb(t.app.db)
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('job_id', '=', String(job.job_id))
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ state: 'failed', attempts: 4, last_status: 503 });
    } finally {
      t.env.config.now = Date.now;
      await r.close();
    }
  });

  it('pdfedit admin webhook-secret prints the secret, --rotate replaces it', async () => {
    const account = await ensureAccount(t.app.db, 'hooks@example.com', 'free');
    const before = await getWebhookSecret(t.app.db, account.id);
    const run = async (args: string[]) => {
      const out: string[] = [];
      const env: Record<string, string> = { DATA_DIR: t.env.config.dataDir, LOG_LEVEL: 'silent' };
      if (kind === 'postgres') env.DATABASE_URL = t.env.config.databaseUrl;
      const code = await main(['admin', 'webhook-secret', '--email', 'hooks@example.com', ...args], {
        out: (l) => out.push(l),
        err: () => {},
        env,
      });
      return { code, last: out.at(-1) };
    };
    expect(await run([])).toEqual({ code: 0, last: before });
    const rotated = await run(['--rotate']);
    expect(rotated.code).toBe(0);
    expect(rotated.last).toMatch(/^whsec_[0-9A-Za-z]+$/);
    expect(rotated.last).not.toBe(before);
    expect(await getWebhookSecret(t.app.db, account.id)).toBe(rotated.last);
  });
});

import type dns from 'node:dns';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { jobsDb } from '../../src/domain/jobs.js';
import { RETRY_DELAYS_MS } from '../../src/net/webhooks.js';
import { bearer, startApp, type TestApp } from '../helpers/app.js';
import { corpusPath } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import { waitForJob } from '../helpers/jobs.js';

/**
 * SSRF regression suite (issue 21 item 6): every address form an attacker would try, for
 * the three URLs the service reaches on a caller's behalf (source.url, records_url,
 * options.webhook_url), through the API, with the production address policy
 * (ALLOW_PRIVATE_URLS off). A canary listens on loopback (IPv4 and IPv6) on the port every
 * form names, and must see no connection at all.
 *
 * Two stand-ins, both test-only and both mocked in the service's own modules:
 * - 127.0.0.2 plays a public host (the policy mock admits exactly it), so redirects and
 *   rebinding can be tried without the internet;
 * - a stub resolver answers the names under `.ssrf.test`, among them names that rebind:
 *   public on the first lookup, loopback on every later one.
 */

const PUBLIC_IP = '127.0.0.2';
const lookups = new Map<string, number>();
/** The stub resolver's table: name → addresses, given the number of earlier lookups of it. */
function stubAnswer(name: string, n: number): string[] | undefined {
  if (!name.endsWith('.ssrf.test')) return undefined;
  const label = name.split('.')[0]!;
  if (label.startsWith('rebind')) return [n === 0 ? PUBLIC_IP : '127.0.0.1'];
  const table: Record<string, string[]> = {
    public: [PUBLIC_IP],
    loop: ['127.0.0.1'],
    loop6: ['::1'],
    mapped: ['::ffff:127.0.0.1'],
    meta: ['169.254.169.254'],
    mixed: [PUBLIC_IP, '127.0.0.1'],
    zero: ['0.0.0.0'],
  };
  return table[label] ?? [];
}

vi.mock('node:dns', async (importOriginal) => {
  const real = await importOriginal<typeof dns>();
  const lookup = (
    hostname: string,
    options: dns.LookupAllOptions,
    callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
  ) => {
    const n = lookups.get(hostname) ?? 0;
    lookups.set(hostname, n + 1);
    const answer = stubAnswer(hostname, n);
    if (answer === undefined) return real.lookup(hostname, options, callback);
    if (answer.length === 0) {
      const err: NodeJS.ErrnoException = new Error(`stub: ${hostname} not found`);
      err.code = 'ENOTFOUND';
      return process.nextTick(callback, err, []);
    }
    const all = answer.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
    process.nextTick(callback, null, all);
  };
  return { ...real, default: { ...real, lookup }, lookup };
});

vi.mock('../../src/net/address-policy.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/net/address-policy.js')>();
  return {
    ...real,
    isForbiddenAddress: (ip: string, allowPrivate?: boolean) =>
      ip === PUBLIC_IP ? false : real.isForbiddenAddress(ip, allowPrivate),
  };
});

/** Counts every TCP connection; never answers. */
class Canary {
  connections = 0;
  private readonly servers: net.Server[] = [];
  async listen(host: string, port: number): Promise<number> {
    const server = net.createServer((socket) => {
      this.connections++;
      socket.destroy();
    });
    this.servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
    return (server.address() as AddressInfo).port;
  }
  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => new Promise((r) => s.close(r))));
  }
}

const canary = new Canary();
let port: number;
let publicServer: http.Server;
const publicHits: string[] = [];
let hookAnswer = 500;
const PDF = HAVE_CORPUS
  ? readFileSync(corpusPath('doc-invoice-itextsharp-demo.pdf'))
  : Buffer.from('%PDF-1.4\n');
let t: TestApp;
let key: string;

beforeAll(async () => {
  port = await canary.listen('127.0.0.1', 0);
  // IPv6 loopback too, where the machine has it (the forms [::1] and ::ffff:… name it).
  await canary.listen('::1', port).catch(() => undefined);
  // The public stand-in listens on the canary's port too: a rebound name reaches the
  // canary exactly when it reaches loopback instead of the stand-in.
  publicServer = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    publicHits.push(`${req.method} ${url.pathname}`);
    if (url.pathname === '/to') {
      // A header carries ASCII only: other characters (fullwidth digits) go percent-encoded,
      // which the URL parser decodes back before it judges the host.
      const target = url.searchParams.get('u') ?? '/';
      return res.writeHead(302, { location: /[^\x21-\x7e]/.test(target) ? encodeURI(target) : target }).end();
    }
    if (url.pathname === '/again') return res.writeHead(302, { location: '/doc.pdf' }).end();
    if (url.pathname === '/doc.pdf')
      return res.writeHead(200, { 'content-type': 'application/pdf' }).end(PDF);
    if (url.pathname === '/records.csv')
      return res.writeHead(200, { 'content-type': 'text/csv' }).end('name\nAda\n');
    if (url.pathname === '/hook-redirect') {
      return res.writeHead(307, { location: `http://127.0.0.1:${port}/hook` }).end();
    }
    if (url.pathname === '/hook') return res.writeHead(hookAnswer).end();
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => publicServer.listen(port, PUBLIC_IP, resolve));
  // Production policy: no ALLOW_PRIVATE_URLS. The poll is off: the tests drive delivery.
  t = await startApp('sqlite', {
    WEBHOOK_POLL_MS: '3600000',
    WORKER_GRACE_MS: '2000',
    // Hundreds of refused requests in a minute: the rate limit is not what is tested here.
    RATE_LIMIT_FACTOR: '100',
  });
  key = await t.newKey('ssrf@example.com', 'starter');
});

afterAll(async () => {
  await t?.close();
  publicServer?.closeAllConnections();
  await new Promise((r) => publicServer?.close(r));
  await canary.close();
});

afterEach(() => {
  // The whole point: no form, on any of the three paths, ever reached loopback.
  expect(canary.connections).toBe(0);
});

const P = () => port;
/** Forms a request-time check refuses without DNS (400, naming the member). */
const precheckForms = (): [string, string][] => [
  ['loopback', `http://127.0.0.1:${P()}/x`],
  ['decimal', `http://2130706433:${P()}/x`],
  ['octal', `http://0177.0.0.1:${P()}/x`],
  ['octal whole', `http://017700000001:${P()}/x`],
  ['hex', `http://0x7f000001:${P()}/x`],
  ['hex dotted', `http://0x7f.0x0.0x0.0x1:${P()}/x`],
  ['short', `http://127.1:${P()}/x`],
  ['short 3-part', `http://127.0.1:${P()}/x`],
  ['fullwidth digits', `http://１２７.０.０.１:${P()}/x`],
  ['zero', `http://0:${P()}/x`],
  ['unspecified', `http://0.0.0.0:${P()}/x`],
  ['IPv6 loopback', `http://[::1]:${P()}/x`],
  ['IPv4-mapped', `http://[::ffff:127.0.0.1]:${P()}/x`],
  ['IPv4-mapped hex', `http://[::ffff:7f00:1]:${P()}/x`],
  ['IPv4-compatible', `http://[::127.0.0.1]:${P()}/x`],
  ['NAT64', `http://[64:ff9b::127.0.0.1]:${P()}/x`],
  ['6to4', `http://[2002:7f00:1::]:${P()}/x`],
  ['private 10/8', 'http://10.0.0.1/x'],
  ['private 192.168/16', 'http://192.168.1.1/x'],
  ['CGNAT (Alibaba metadata)', 'http://100.100.100.200/latest/meta-data/'],
  ['link-local metadata', 'http://169.254.169.254/latest/meta-data/'],
  ['link-local', 'http://169.254.1.1/x'],
  ['IPv6 link-local', 'http://[fe80::1]/x'],
  ['IPv6 unique-local (AWS metadata)', 'http://[fd00:ec2::254]/latest/meta-data/'],
  ['metadata name', 'http://metadata.google.internal/computeMetadata/v1/'],
  ['localhost', `http://localhost:${P()}/x`],
  ['localhost upper case, trailing dot', `http://LOCALHOST.:${P()}/x`],
  ['sub.localhost', `http://a.b.localhost:${P()}/x`],
  ['mDNS .local', 'http://printer.local/x'],
  ['userinfo', 'http://user:secret@example.com/x'],
  ['userinfo hiding loopback', `http://example.com@127.0.0.1:${P()}/x`],
  ['file scheme', 'file:///etc/passwd'],
  ['ftp scheme', `ftp://127.0.0.1:${P()}/x`],
  ['gopher scheme', `gopher://127.0.0.1:${P()}/_GET%20/`],
  ['dict scheme', `dict://127.0.0.1:${P()}/info`],
  ['ws scheme', `ws://127.0.0.1:${P()}/x`],
  ['data URL', 'data:application/pdf;base64,JVBERi0xLjQK'],
  ['javascript URL', 'javascript:alert(1)'],
  ['not a URL', 'not a url'],
];
/** Names only DNS can judge: refused at connect time by the same policy (502). */
const resolvedForms = (): [string, string][] => [
  ['name → 127.0.0.1', `http://loop.ssrf.test:${P()}/x`],
  ['name → ::1', `http://loop6.ssrf.test:${P()}/x`],
  ['name → ::ffff:127.0.0.1', `http://mapped.ssrf.test:${P()}/x`],
  ['name → metadata address', `http://meta.ssrf.test:${P()}/x`],
  ['name → 0.0.0.0', `http://zero.ssrf.test:${P()}/x`],
  ['name → public and loopback', `http://mixed.ssrf.test:${P()}/x`],
];

/** The three paths by which a caller hands the service a URL. */
const paths = {
  'source.url': (url: string) =>
    t.app.inject({ method: 'POST', url: '/v1/text', headers: bearer(key), payload: { source: { url } } }),
  records_url: (url: string) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/batch',
      headers: bearer(key),
      payload: {
        template: { file_id: 'file_none' },
        edits: [{ find: 'a', replace: '{name}' }],
        records_url: url,
      },
    }),
  'options.webhook_url': (url: string) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/edit',
      headers: bearer(key),
      payload: {
        source: { file_id: 'file_none' },
        edits: [{ find: 'a', replace: 'b' }],
        options: { webhook_url: url },
      },
    }),
};

describe.each(Object.entries(paths))('%s: refused at request time', (member, send) => {
  it('answers 400 invalid_request naming the member, for every form a check without DNS can judge', async () => {
    const answers: string[] = [];
    for (const [form, url] of precheckForms()) {
      const res = await send(url);
      const body = res.json();
      answers.push(`${form}: ${res.statusCode} ${body.error?.code}`);
      expect(res.statusCode, `${form} ${url}: ${res.body}`).toBe(400);
      expect(body.error.code, form).toBe('invalid_request');
      expect(body.error.message, form).toContain(member);
      expect(body.error.message, form).not.toContain('secret');
    }
    expect(answers).toHaveLength(precheckForms().length);
    expect(publicHits).toEqual([]);
  });
});

describe.each(['source.url', 'records_url'] as const)('%s: refused at connect time', (member) => {
  const send = paths[member];
  it('answers 502 for names that resolve to refused addresses', async () => {
    for (const [form, url] of resolvedForms()) {
      const res = await send(url);
      expect(res.statusCode, `${form}: ${res.body}`).toBe(502);
      expect(res.json().error.code).toBe('upstream_error');
      expect(res.json().error.message, form).toMatch(/resolves to a private, loopback or reserved address/);
    }
  });

  it('refuses every redirect into private space from a public host', async () => {
    const targets = [
      ...precheckForms()
        .filter(([, url]) => /^https?:/.test(url))
        .map(([form, url]) => [form, url] as const),
      ...resolvedForms(),
    ];
    for (const [form, target] of targets) {
      const res = await send(`http://${PUBLIC_IP}:${port}/to?u=${encodeURIComponent(target)}`);
      expect(res.statusCode, `redirect to ${form}: ${res.body}`).toBe(502);
      expect(res.json().error.code).toBe('upstream_error');
    }
    expect(publicHits.filter((h) => h === 'GET /to')).toHaveLength(targets.length);
    publicHits.length = 0;
  });

  it('connects to the address it checked: a name that rebinds after one lookup never reaches loopback', async () => {
    // A check that resolved the name apart from the connection would see the public answer
    // and then connect to the loopback one. Here the one lookup is the connection's.
    const name = `rebind-${member.replace(/\W/g, '')}.ssrf.test`;
    const direct = await send(
      `http://${name}:${port}/${member === 'source.url' ? 'doc.pdf' : 'records.csv'}`,
    );
    expect(direct.statusCode, direct.body).not.toBe(502);
    expect(lookups.get(name)).toBe(1);
    // The next hop of the same name is a new connection, resolved and checked again.
    const again = `rebind2-${member.replace(/\W/g, '')}.ssrf.test`;
    const redirected = await send(`http://${again}:${port}/again`);
    expect(redirected.statusCode, redirected.body).toBe(502);
    expect(redirected.json().error.message).toMatch(/resolves to a private/);
    expect(lookups.get(again)).toBe(2);
    publicHits.length = 0;
  });
});

describe.skipIf(!HAVE_CORPUS)('options.webhook_url: refused at every delivery attempt', () => {
  it('never delivers to a name that resolves to loopback, rebinds, or a receiver that redirects', async () => {
    const hooks = [
      ...resolvedForms().map(([form, url]) => [form, url] as const),
      ['rebinding on the retry', `http://rebind-hook.ssrf.test:${port}/hook`] as const,
      ['public receiver redirecting to loopback', `http://${PUBLIC_IP}:${port}/hook-redirect`] as const,
    ];
    const jobs: { form: string; id: string }[] = [];
    for (const [form, url] of hooks) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/edit',
        headers: bearer(key),
        payload: {
          source: { url: `http://${PUBLIC_IP}:${port}/doc.pdf` },
          edits: [{ find: 'Bayside Wholesale', replace: 'Baysider Wholesale' }],
          options: { webhook_url: url },
        },
      });
      // Only DNS can tell where these go: accepted now, refused when delivered.
      expect(res.statusCode, `${form}: ${res.body}`).toBe(202);
      jobs.push({ form, id: res.json().job_id });
    }
    for (const job of jobs) await waitForJob(t.app, key, job.id);
    let clock = Date.now();
    t.env.config.now = () => clock;
    try {
      hookAnswer = 500;
      // Every attempt of every delivery: at once, then after 1, 5 and 30 minutes.
      for (const wait of [0, ...RETRY_DELAYS_MS]) {
        clock += wait;
        await t.app.jobs.webhooks.deliverDue();
      }
    } finally {
      t.env.config.now = Date.now;
    }
    for (const job of jobs) {
      const row = await jobsDb(t.app.db)
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('job_id', '=', job.id)
        .executeTakeFirstOrThrow();
      expect(row, job.form).toMatchObject({ state: 'failed', attempts: 4 });
    }
    // The rebinding name answered public once (attempt 1 reached the stand-in, which
    // answered 500), then loopback: attempts 2–4 were refused at connect.
    expect(lookups.get('rebind-hook.ssrf.test')).toBe(4);
    expect(publicHits.filter((h) => h === 'POST /hook')).toHaveLength(1);
    expect(publicHits.filter((h) => h === 'POST /hook-redirect')).toHaveLength(4);
  });
});

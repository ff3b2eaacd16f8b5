import type { AddressInfo } from 'node:net';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { SMTPServer } from 'smtp-server';

/** A browser of the account pages over `app.inject`: keeps cookies, reads the CSRF field. */
export class PageClient {
  readonly cookies = new Map<string, string>();
  constructor(private readonly app: FastifyInstance) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(res: LightMyRequestResponse): void {
    const set = res.headers['set-cookie'];
    for (const c of Array.isArray(set) ? set : set ? [set] : []) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (value === '' || /Expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    const res = await this.app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader() } });
    this.keep(res);
    return res;
  }

  async post(url: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
    const res = await this.app.inject({
      method: 'POST',
      url,
      headers: { cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    });
    this.keep(res);
    return res;
  }
}

/** The value of the first CSRF field of a page. */
export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m?.[1]) throw new Error('no CSRF field on the page');
  return m[1];
}

export interface Mailbox {
  url: string;
  mails: { to: string; raw: string }[];
  /** Waits for the next mail to `to` and returns the sign-in link in it. */
  nextLink(to: string, timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

/** A real SMTP server on loopback (the smtp-server package) collecting every mail. */
export async function startMailbox(): Promise<Mailbox> {
  const mails: { to: string; raw: string }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        for (const rcpt of session.envelope.rcptTo)
          mails.push({ to: rcpt.address, raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  let seen = 0;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async nextLink(to, timeoutMs = 5_000) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        const i = mails.findIndex((m, idx) => idx >= seen && m.to === to);
        if (i >= 0) {
          seen = i + 1;
          // Quoted-printable: soft line breaks and escaped "=".
          const text = mails[i]!.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
          const m = /(https?:\/\/\S+\/account\/link\?token=[A-Za-z0-9_-]+)/.exec(text);
          if (!m?.[1]) throw new Error(`no link in the mail: ${text}`);
          return m[1];
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`no mail to ${to} within ${timeoutMs} ms`);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Signs in through the pages: asks for a link, takes it from the mailbox, confirms it. */
export async function signIn(
  client: PageClient,
  mailbox: Mailbox,
  email: string,
): Promise<LightMyRequestResponse> {
  const form = await client.get('/account');
  const sent = await client.post('/account/sign-in', { _csrf: csrfOf(form.body), email });
  if (sent.statusCode !== 200) throw new Error(`sign-in answered ${sent.statusCode}: ${sent.body}`);
  const link = new URL(await mailbox.nextLink(email.trim().toLowerCase()));
  const confirm = await client.get(`${link.pathname}${link.search}`);
  const done = await client.post('/account/link', {
    _csrf: csrfOf(confirm.body),
    token: link.searchParams.get('token') ?? '',
  });
  if (done.statusCode !== 303) throw new Error(`link answered ${done.statusCode}: ${done.body}`);
  return client.get('/account');
}

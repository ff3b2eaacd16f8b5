import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import axe from 'axe-core';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { corpusPath } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import { type Mailbox, startMailbox } from '../helpers/pages.js';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
/** Screenshots of every page, desktop and phone width; git-ignored. */
const SHOTS = path.join(PROJECT_ROOT, 'screenshots');
const VIEWPORTS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe.skipIf(!existsSync(CHROMIUM) || !HAVE_CORPUS)('the account pages in a real browser', () => {
  let t: TestApp;
  let mailbox: Mailbox;
  let browser: Browser;
  let base: string;
  const axeReports: { page: string; serious: string[] }[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    mailbox = await startMailbox();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startApp('sqlite', { SMTP_URL: mailbox.url, PUBLIC_BASE_URL: base, PORT: String(port) });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await mailbox?.close();
  });

  /** axe-core on the page (no serious or critical violation), then screenshots at both widths. */
  async function check(page: Page, name: string): Promise<void> {
    await page.addScriptTag({ content: axe.source });
    const result = (await page.evaluate(() =>
      (window as unknown as { axe: typeof axe }).axe.run(),
    )) as axe.AxeResults;
    const serious = result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
    axeReports.push({ page: name, serious });
    expect(serious, `axe on ${name}`).toEqual([]);
    for (const [label, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size);
      await page.screenshot({ path: path.join(SHOTS, `${name}-${label}.png`), fullPage: true });
    }
    await page.setViewportSize(VIEWPORTS.desktop);
  }

  const api = (key: string, url: string, init: RequestInit = {}) =>
    fetch(`${base}${url}`, { ...init, headers: { ...(init.headers ?? {}), authorization: `Bearer ${key}` } });

  it('signs up by email, makes a key, uses it, buys a pack, accepts the terms, rotates the secret, revokes the key', async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    const page = await context.newPage();

    // Sign up: the form, the mail, the link.
    await page.goto(`${base}/account`);
    await check(page, '01-sign-in');
    await page.getByLabel('Email address').fill('browser@example.com');
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
    await page.waitForSelector('text=sign-in link is on its way');
    await check(page, '02-check-mail');
    const link = await mailbox.nextLink('browser@example.com');
    await page.goto(link);
    await page.waitForSelector('text=This link signs you in as browser@example.com');
    await check(page, '03-confirm-link');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('text=Signed in as');
    await check(page, '04-account-new');

    // A key, shown once.
    await page.getByLabel('Name (optional)').fill('browser test');
    await page.getByLabel('Mode', { exact: true }).selectOption('live');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.locator('#new-key').textContent())?.trim() ?? '';
    expect(key).toMatch(/^sk_live_/);
    await check(page, '05-key-created');

    // Call the API with it: a real edit (multipart upload), billed one page.
    const form = new FormData();
    form.append(
      'file',
      new Blob([readFileSync(corpusPath('font-tt-subset-libreoffice-trivial.pdf'))], {
        type: 'application/pdf',
      }),
      'trivial.pdf',
    );
    form.append('edits', JSON.stringify([{ op: 'replace', find: 'Lorem ipsum', replace: 'Lorem dolor' }]));
    const edit = await api(key, '/v1/edit', { method: 'POST', body: form });
    expect(edit.status, await edit.clone().text()).toBe(200);
    const usage = (await (await api(key, '/v1/usage')).json()) as { pages_used: number };
    expect(usage.pages_used).toBeGreaterThan(0);
    await page.goto(`${base}/account`);
    expect(await page.locator('#pages-used').textContent()).toBe(String(usage.pages_used));
    await check(page, '06-usage-moved');

    // Try it: upload, find, replace, previews, download.
    await page.getByLabel('PDF file').setInputFiles(corpusPath('font-tt-subset-libreoffice-trivial.pdf'));
    await page.getByLabel('Find', { exact: true }).fill('takimata sanctus');
    await page.getByLabel('Replace with').fill('sanctus takimata');
    await page.getByRole('button', { name: 'Replace and preview' }).click();
    await page.waitForSelector('text=Download the edited PDF');
    const before = page.getByAltText(/before the change/).first();
    const after = page.getByAltText(/after the change/).first();
    for (const img of [before, after])
      expect(
        await img.evaluate(
          (el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0,
        ),
      ).toBe(true);
    const download = await fetch(
      new URL(
        (await page.getByRole('link', { name: 'Download the edited PDF' }).getAttribute('href'))!,
        base,
      ),
    );
    expect(download.status).toBe(200);
    expect(
      Buffer.from(await download.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    await check(page, '06b-try-it-result');
    await page.goto(`${base}/account`);

    // Buy a credit pack through the local provider.
    await page.getByLabel('Credit pack', { exact: true }).selectOption('try_it');
    await page.getByRole('button', { name: 'Buy pack' }).click();
    await page.waitForSelector('text=Local payment provider');
    await check(page, '07-local-checkout');
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForSelector('text=Signed in as');
    expect(await page.locator('#credit-pages').textContent()).toBe('500');
    const credits = (await (await api(key, '/v1/usage')).json()) as { credit_pages: number };
    expect(credits.credit_pages).toBe(500);
    await check(page, '08-pack-bought');

    // The terms.
    await page.getByLabel(/I accept the document-integrity terms/).check();
    await page.getByRole('button', { name: 'Accept terms' }).click();
    await page.waitForSelector('text=You accepted version');
    await check(page, '09-terms-accepted');

    // The webhook secret.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = (await page.locator('#webhook-secret').textContent())?.trim();
    expect(secret).toMatch(/^whsec_/);
    await check(page, '10-secret-rotated');

    // Revoke: 401 at once.
    await page.getByRole('button', { name: 'Revoke key browser test' }).click();
    await page.waitForSelector('text=The key is revoked');
    expect((await api(key, '/v1/usage')).status).toBe(401);
    await check(page, '11-key-revoked');
    await context.close();
    expect(axeReports.map((r) => r.page)).toHaveLength(12);
  });
});

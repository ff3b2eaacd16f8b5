/**
 * HTML of the account pages, rendered on the server. Every action is a plain form (works
 * without JavaScript); the only script is the copy button of a new key, which is an
 * enhancement. Text is escaped at every interpolation through `esc`.
 */

export function esc(value: unknown): string {
  return String(value)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

const CSS = `
:root{color-scheme:light;--fg:#1a1a1a;--muted:#4a4a4a;--line:#c8c8c8;--accent:#0b5cad;--bg:#fff;--warn:#8a1c1c}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}a:focus,button:focus,input:focus,select:focus{outline:3px solid #f0a500;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px}
header{border-bottom:1px solid var(--line);padding:12px 16px;display:flex;justify-content:space-between;align-items:center;gap:8px;flex-wrap:wrap}
header .brand{font-weight:700;font-size:1.1rem}main{max-width:960px;margin:0 auto;padding:16px}
section{border:1px solid var(--line);border-radius:6px;padding:12px 16px;margin:16px 0}
h1{font-size:1.6rem;margin:8px 0}h2{font-size:1.25rem;margin:4px 0 8px}
label{display:block;font-weight:600;margin:8px 0 4px}input[type=text],input[type=email],select{font:inherit;padding:6px 8px;border:1px solid #767676;border-radius:4px;min-width:0;max-width:100%}
button{font:inherit;padding:6px 12px;border-radius:4px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
button.secondary{background:#fff;color:var(--accent)}button.danger{background:var(--warn);border-color:var(--warn)}
.row{display:flex;gap:8px;flex-wrap:wrap;align-items:flex-end}.row form{margin:0}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:4px 6px;border-bottom:1px solid var(--line);vertical-align:top}
.table-wrap{overflow-x:auto}.muted{color:var(--muted)}.notice{border-left:4px solid var(--accent);padding:8px 12px;background:#eef4fb}
.alert{border-left:4px solid var(--warn);padding:8px 12px;background:#fbeeee}code,.secret{font-family:ui-monospace,monospace;word-break:break-all}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;margin:0}dt{font-weight:600}dd{margin:0}
svg{max-width:100%;height:auto}figure{margin:8px 0}caption{text-align:left;padding:4px 0}
@media (max-width:600px){table.stack thead{position:absolute;left:-9999px}table.stack tr{display:block;border-bottom:1px solid var(--line);padding:6px 0}
table.stack td{display:flex;gap:12px;border:0;padding:2px 0}table.stack td::before{content:attr(data-label);font-weight:600;min-width:6.5em}}
`;

export function layout(
  title: string,
  body: string,
  opts: { signedIn?: boolean; csrf?: string } = {},
): string {
  const signOut =
    opts.signedIn && opts.csrf
      ? `<form method="post" action="/account/sign-out"><input type="hidden" name="_csrf" value="${esc(opts.csrf)}"><button class="secondary" type="submit">Sign out</button></form>`
      : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · pdfedit</title><style>${CSS}</style></head>
<body><a class="skip" href="#main">Skip to content</a>
<header><span class="brand">pdfedit</span><nav aria-label="Account">${signOut}</nav></header>
<main id="main"><h1>${esc(title)}</h1>
${body}
</main></body></html>`;
}

const csrfField = (csrf: string) => `<input type="hidden" name="_csrf" value="${esc(csrf)}">`;

export function signInPage(csrf: string, message?: { kind: 'notice' | 'alert'; text: string }): string {
  const note = message ? `<p class="${message.kind}" role="status">${esc(message.text)}</p>` : '';
  return layout(
    'Sign in',
    `${note}<p>Enter your email address. We send you a link that signs you in; it works once, within 15 minutes.
A new address gets a free account (200 pages a month, no card).</p>
<form method="post" action="/account/sign-in">${csrfField(csrf)}
<label for="email">Email address</label>
<div class="row"><input id="email" name="email" type="email" autocomplete="email" required maxlength="254" size="32">
<button type="submit">Email me a sign-in link</button></div></form>`,
  );
}

export function checkMailPage(email: string): string {
  return layout(
    'Check your mail',
    `<p class="notice" role="status">If <strong>${esc(email)}</strong> can receive mail, a sign-in link is on its way. It works once, within 15 minutes.</p>
<p><a href="/account">Back</a></p>`,
  );
}

export function confirmLinkPage(csrf: string, token: string, email: string): string {
  return layout(
    'Finish signing in',
    `<p>This link signs you in as <strong>${esc(email)}</strong>.</p>
<p>Press the button only if that is your address and you asked for the link yourself.</p>
<form method="post" action="/account/link">${csrfField(csrf)}<input type="hidden" name="token" value="${esc(token)}">
<button type="submit">Sign in</button></form>`,
  );
}

export function messagePage(title: string, text: string, back = '/account'): string {
  return layout(
    title,
    `<p class="alert" role="alert">${esc(text)}</p><p><a href="${esc(back)}">Back</a></p>`,
  );
}

export interface KeyView {
  id: string;
  name: string | null;
  mode: string;
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface AccountView {
  csrf: string;
  email: string;
  accountId: string;
  plan: string;
  planAtPeriodEnd: string | null;
  periodEnd: number | null;
  holdReason: string | null;
  provider: string;
  keys: KeyView[];
  newKey?: { key: string; name: string | null };
  usage: {
    periodStart: number;
    periodEnd: number;
    pagesUsed: number;
    allowance: number;
    creditPages: number;
    remaining: number;
    overagePages: number;
  };
  daily: number[];
  invoices: { period: string; pages: number; cents: number }[];
  terms: { version: string; acceptedAt: number | null; current: boolean };
  webhookSecret?: string;
  jobs: { id: string; kind: string; status: string; createdAt: number; outputUrl: string | null }[];
  flash?: string;
}

const pages = (n: number) => `${n} ${n === 1 ? 'page' : 'pages'}`;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const when = (ms: number | null) =>
  ms === null ? '—' : `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** Pages per day of the period as bars; the numbers also stand in a text alternative. */
export function usageChart(daily: number[], periodStart: number): string {
  const w = 620;
  const h = 160;
  const pad = 28;
  const max = Math.max(1, ...daily);
  const bw = (w - pad * 2) / Math.max(1, daily.length);
  const bars = daily
    .map((n, i) => {
      const bh = Math.round(((h - pad * 2) * n) / max);
      const x = pad + i * bw;
      return `<rect x="${x.toFixed(1)}" y="${h - pad - bh}" width="${Math.max(1, bw - 2).toFixed(1)}" height="${bh}" fill="#0b5cad"><title>${day(periodStart + i * 86_400_000)}: ${pages(n)}</title></rect>`;
    })
    .join('');
  const total = daily.reduce((a, b) => a + b, 0);
  const busiest = daily.indexOf(Math.max(...daily));
  const desc = total
    ? `${pages(total)} this period; busiest day ${day(periodStart + busiest * 86_400_000)} with ${pages(daily[busiest] ?? 0)}.`
    : 'No pages used this period yet.';
  return `<figure><svg role="img" aria-labelledby="chart-title chart-desc" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}">
<title id="chart-title">Pages per day</title><desc id="chart-desc">${esc(desc)}</desc>
<line x1="${pad}" y1="${h - pad}" x2="${w - pad}" y2="${h - pad}" stroke="#4a4a4a"/>
<text x="${pad}" y="${pad - 8}" font-size="14" fill="#1a1a1a">${total ? `max ${pages(max)} a day` : ''}</text>
<text x="${pad}" y="${h - 6}" font-size="14" fill="#1a1a1a">${day(periodStart)}</text>
<text x="${w - pad}" y="${h - 6}" font-size="14" fill="#1a1a1a" text-anchor="end">${day(periodStart + (daily.length - 1) * 86_400_000)}</text>
${bars}</svg><figcaption class="muted">${esc(desc)}</figcaption></figure>`;
}

function keysSection(v: AccountView): string {
  const fresh = v.newKey
    ? `<div class="notice" role="status"><p><strong>Your new key${v.newKey.name ? ` “${esc(v.newKey.name)}”` : ''}.</strong> Copy it now: it is shown only this once.</p>
<p><code id="new-key" class="secret">${esc(v.newKey.key)}</code></p>
<button type="button" class="secondary" id="copy-key" hidden>Copy key</button>
<script>(()=>{const b=document.getElementById('copy-key');if(!navigator.clipboard)return;b.hidden=false;b.addEventListener('click',async()=>{await navigator.clipboard.writeText(document.getElementById('new-key').textContent);b.textContent='Copied';});})();</script></div>`
    : '';
  const rows = v.keys
    .map(
      (
        k,
      ) => `<tr><td data-label="Name">${esc(k.name ?? '—')}</td><td data-label="Key"><code>${esc(k.prefix)}…</code></td><td data-label="Mode">${esc(k.mode)}</td>
<td data-label="Created">${when(k.createdAt)}</td><td data-label="Last used">${when(k.lastUsedAt)}</td><td data-label="State">${
        k.revokedAt !== null
          ? `revoked ${when(k.revokedAt)}`
          : `<form method="post" action="/account/keys/revoke">${csrfField(v.csrf)}<input type="hidden" name="key_id" value="${esc(k.id)}"><button class="danger" type="submit" aria-label="Revoke key ${esc(k.name ?? k.prefix)}">Revoke</button></form>`
      }</td></tr>`,
    )
    .join('');
  return `<section aria-labelledby="keys-h"><h2 id="keys-h">API keys</h2>${fresh}
<form method="post" action="/account/keys">${csrfField(v.csrf)}<div class="row">
<div><label for="key-name">Name (optional)</label><input id="key-name" name="name" type="text" maxlength="64"></div>
<div><label for="key-mode">Mode</label><select id="key-mode" name="mode"><option value="live">live</option><option value="test">test</option></select></div>
<button type="submit">Create key</button></div></form>
${v.keys.length ? `<div class="table-wrap"><table class="stack"><caption class="muted">Your keys</caption><thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Mode</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th></tr></thead><tbody>${rows}</tbody></table></div>` : '<p class="muted">No keys yet.</p>'}
</section>`;
}

function planSection(v: AccountView): string {
  const paid = ['starter', 'growth', 'scale'].filter((p) => p !== v.plan);
  const ending =
    v.planAtPeriodEnd && v.periodEnd
      ? `<p class="notice">Your plan changes to <strong>${esc(v.planAtPeriodEnd)}</strong> on ${day(v.periodEnd)}.</p>`
      : '';
  const cancel =
    v.plan !== 'free' && !v.planAtPeriodEnd
      ? `<form method="post" action="/account/plan/cancel">${csrfField(v.csrf)}<button class="secondary" type="submit">Cancel plan at period end</button></form>`
      : '';
  const invoices = v.invoices.length
    ? `<h3>Overage invoices</h3><ul>${v.invoices.map((i) => `<li>${esc(i.period)}: ${i.pages} pages, ${(i.cents / 100).toFixed(2)} USD</li>`).join('')}</ul>`
    : '';
  return `<section aria-labelledby="plan-h"><h2 id="plan-h">Plan and credit packs</h2>${ending}
<p>Plan: <strong>${esc(v.plan)}</strong>. Payments: ${esc(v.provider)} provider.</p>
<form method="post" action="/account/checkout">${csrfField(v.csrf)}<div class="row">
<div><label for="plan-choice">Change plan to</label><select id="plan-choice" name="plan">${paid.map((p) => `<option value="${p}">${p}</option>`).join('')}</select></div>
<button type="submit">Go to checkout</button></div></form>
<form method="post" action="/account/checkout">${csrfField(v.csrf)}<div class="row">
<div><label for="pack-choice">Credit pack</label><select id="pack-choice" name="pack"><option value="try_it">Try-it pack: 500 pages</option><option value="large">Large pack: 5,000 pages</option></select></div>
<button type="submit">Buy pack</button></div></form>
<div class="row">${cancel}</div>${invoices}</section>`;
}

export function accountPage(v: AccountView): string {
  const u = v.usage;
  const hold = v.holdReason
    ? `<p class="alert" role="alert">This account is on hold (${esc(v.holdReason)}): its keys answer 402 until the hold is cleared. Contact support.</p>`
    : '';
  const flash = v.flash ? `<p class="notice" role="status">${esc(v.flash)}</p>` : '';
  const terms = v.terms.current
    ? `<p>You accepted version ${esc(v.terms.version)} on ${when(v.terms.acceptedAt)}.</p>`
    : `<form method="post" action="/account/terms">${csrfField(v.csrf)}
<p><input type="checkbox" id="terms-ok" name="accept" value="yes" required> <label for="terms-ok" style="display:inline">I accept the document-integrity terms, version ${esc(v.terms.version)}</label></p>
<button type="submit">Accept terms</button></form>`;
  const secret = v.webhookSecret
    ? `<p><code class="secret" id="webhook-secret">${esc(v.webhookSecret)}</code></p>`
    : '<p class="muted">Hidden.</p>';
  const jobs = v.jobs.length
    ? `<div class="table-wrap"><table class="stack"><caption class="muted">Latest jobs</caption><thead><tr><th scope="col">Job</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Output</th></tr></thead><tbody>${v.jobs
        .map(
          (j) =>
            `<tr><td data-label="Job"><code>${esc(j.id)}</code></td><td data-label="Kind">${esc(j.kind)}</td><td data-label="Status">${esc(j.status)}</td><td data-label="Created">${when(j.createdAt)}</td><td data-label="Output">${j.outputUrl ? `<a href="${esc(j.outputUrl)}">Download</a>` : '—'}</td></tr>`,
        )
        .join('')}</tbody></table></div>`
    : '<p class="muted">No jobs yet.</p>';
  return layout(
    'Your account',
    `${hold}${flash}<p>Signed in as <strong>${esc(v.email)}</strong> (<code>${esc(v.accountId)}</code>).</p>
${keysSection(v)}
<section aria-labelledby="usage-h"><h2 id="usage-h">Usage this period</h2>
<p class="muted">${day(u.periodStart)} to ${day(u.periodEnd - 1)} (live keys; the same numbers as GET /v1/usage).</p>
<dl><dt>Pages used</dt><dd id="pages-used">${u.pagesUsed}</dd><dt>Allowance</dt><dd>${u.allowance}</dd>
<dt>Credit-pack pages</dt><dd id="credit-pages">${u.creditPages}</dd><dt>Remaining</dt><dd>${u.remaining}</dd><dt>Overage pages</dt><dd>${u.overagePages}</dd></dl>
${usageChart(v.daily, u.periodStart)}</section>
${planSection(v)}
<section aria-labelledby="terms-h"><h2 id="terms-h">Document-integrity terms</h2>
<p>Edited documents must not be used to deceive. You keep the originals, you do not alter documents you are not entitled to alter (statements, IDs, signed contracts, invoices, sealed papers), and you answer for the use of the outputs. Accepting these terms lets Growth and Scale accounts turn the “Edited” mark off on flagged documents.</p>
${terms}</section>
<section aria-labelledby="secret-h"><h2 id="secret-h">Webhook secret</h2>
<p>Job webhooks are signed with this secret (X-Signature, HMAC-SHA256). Rotating it makes the old one stop working at once.</p>
${secret}<div class="row">
<form method="post" action="/account/webhook-secret">${csrfField(v.csrf)}<input type="hidden" name="action" value="reveal"><button class="secondary" type="submit">Reveal secret</button></form>
<form method="post" action="/account/webhook-secret">${csrfField(v.csrf)}<input type="hidden" name="action" value="rotate"><button type="submit">Rotate secret</button></form></div></section>
<section aria-labelledby="try-h"><h2 id="try-h">Try it</h2>
<p>Upload a PDF, give a phrase and its replacement, and see the page before and after. Billed to this account like an API call (live).</p>
<form method="post" action="/account/try?_csrf=${encodeURIComponent(v.csrf)}" enctype="multipart/form-data">
<label for="try-file">PDF file</label><input id="try-file" name="file" type="file" accept="application/pdf,.pdf" required>
<div class="row"><div><label for="try-find">Find</label><input id="try-find" name="find" type="text" maxlength="500" required></div>
<div><label for="try-replace">Replace with</label><input id="try-replace" name="replace" type="text" maxlength="500"></div>
<button type="submit">Replace and preview</button></div></form></section>
<section aria-labelledby="jobs-h"><h2 id="jobs-h">Recent jobs</h2>${jobs}</section>
<section aria-labelledby="close-h"><h2 id="close-h">Close the account</h2>
<p>Keys are revoked, the subscription is cancelled, files and outputs are deleted at once, job records are kept without document content, and the email address is freed.</p>
<form method="post" action="/account/close">${csrfField(v.csrf)}<label for="close-email">Type your email address to confirm</label>
<div class="row"><input id="close-email" name="confirm" type="email" required size="32"><button class="danger" type="submit">Close account</button></div></form></section>`,
    { signedIn: true, csrf: v.csrf },
  );
}

export function localCheckoutPage(
  csrf: string,
  c: { id: string; kind: string; item: string; cents: number; expired: boolean; done: boolean },
): string {
  const packNames: Record<string, string> = {
    try_it: 'try-it credit pack (500 pages)',
    large: 'large credit pack (5,000 pages)',
  };
  const what = c.kind === 'plan' ? `the ${c.item} plan (monthly)` : `the ${packNames[c.item] ?? c.item}`;
  const body = c.done
    ? '<p class="notice" role="status">This checkout is paid.</p><p><a href="/account">Back to the account</a></p>'
    : c.expired
      ? '<p class="alert" role="alert">This checkout has expired. Start a new one from the account page.</p>'
      : `<p>Local payment provider of this service (no card is charged): pay for ${esc(what)}, ${(c.cents / 100).toFixed(2)} USD.</p>
<form method="post" action="/billing/local/checkout/${esc(c.id)}">${csrfField(csrf)}<button type="submit">Pay ${(c.cents / 100).toFixed(2)} USD</button></form>
<p><a href="/account">Cancel</a></p>`;
  return layout('Checkout', body);
}

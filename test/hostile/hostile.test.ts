import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE_CASES } from '../../fixtures/hostile/generate.js';
import { usageOf } from '../../src/billing/meter.js';
import { billingSubject } from '../../src/billing/subject.js';
import { ERROR_STATUS, isErrorCode } from '../../src/kernel/error-codes.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { corpusPath } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import { type FileServer, serveFiles } from '../helpers/serve.js';

/**
 * Issue 21 item 2: every hostile document through the service's real routes, on a listening
 * port, with small budgets. Each answer must be 200 (a document read as it should be) or a
 * typed error of the closed list: a 4xx, 504 engine_timeout, or 500 engine_error only when
 * its engine process died at the memory ceiling. It arrives within its budget, bills no
 * page (an answered edit bills at most the one real page), /healthz answers 200 afterwards,
 * and a well-formed /v1/text sent on another connection meanwhile is served within 2x its
 * usual time (plus a floor: see SIDE_FLOOR_MS).
 */

/** Budget of one engine call here (SYNC_TIMEOUT_MS): every plan's budget is capped by it. */
const BUDGET_MS = 3_000;
/** An engine process's address space (an idle one maps about 760 MiB). */
const MEMORY_MB = 1_024;
/** A route makes at most two engine calls (open, then its work), each with its budget, plus
 * the replacement of a killed process. */
const DEADLINE_MS = 2 * BUDGET_MS + 4_000;

type Route = 'text' | 'preview' | 'edit' | 'edit-keyless';
const ROUTES: Route[] = ['text', 'preview', 'edit', 'edit-keyless'];

/**
 * Cases that break an invariant today, with the reason; the test asserts the breach still
 * shows, so fixing one fails the test until its entry is removed here.
 */
const KNOWN_GAPS: Record<string, string> = {};

/**
 * Cases the engine's document budgets (crates/pdfedit-engine/src/open/budget/, per plan
 * in src/billing/plans.ts) must refuse on every route before PDFium opens them: 422
 * document_unsupported naming the limit. The key is free here, keyless for edit-keyless:
 * both get the tight budgets.
 */
const REFUSED_BY: Record<string, RegExp> = {
  'flate-bomb': /limit (stream|document)_bytes:/,
  'flate-bomb-many': /limit (stream|document)_bytes:/,
  'flate-bomb-indirect-filter': /limit (stream|document)_bytes:/,
  'ops-10m': /limit page_operators:/,
  'nested-forms-20': /limit form_(depth|draws):/,
  'forms-fan-out': /limit (form_draws|page_operators):/,
  'appearance-ops': /limit page_operators:/,
  'page-tree-cycle': /limit page_tree:/,
  'kids-1500': /limit page_tree:/,
  'mediabox-1e9': /limit page_size:/,
  'type3-glyph-ops': /limit page_operators:/,
  'type3-glyph-bomb': /limit (stream|document)_bytes:/,
  'encrypted-bomb': /limit (stream|document)_bytes:/,
};

/**
 * The concurrency bar: a well-formed /v1/text sent on another connection while a hostile
 * request runs is served within 2x its usual time (the median of three alone, measured
 * just before, on the same service), plus this floor. The floor absorbs scheduler noise
 * that is not the hostile request's doing: on a loaded 2-core CI box (other builds,
 * vitest's own workers) a 30 ms request alone can take 100-200 ms more once in a while,
 * which 2x of a small number cannot absorb. A hostile request that really held the other
 * engine process, or the event loop, costs seconds: far past the floor.
 */
const SIDE_FLOOR_MS = 250;
const SLOW_SIDE = 'concurrent well-formed /v1/text took';

interface Outcome {
  status: number;
  code: string | undefined;
  message: string | undefined;
  ms: number;
  peakRssMb: number;
  billed: number;
  crashed: number;
  /** Engine processes replaced because a call failed in them (an allocation refused at the
   * memory ceiling): the process ends, as when it dies there. */
  failed: number;
  healthz: number;
  sideStatus: number;
  sideMs: number;
  /** The well-formed request's usual time, alone, just before (median of three). */
  usualMs: number;
}

const table: string[] = [];

describe.skipIf(!HAVE_CORPUS)('hostile PDFs through the routes', () => {
  let t: TestApp;
  let files: FileServer;
  let base = '';
  let key = '';
  const invoice = HAVE_CORPUS ? readFileSync(corpusPath('doc-invoice-itextsharp-demo.pdf')) : Buffer.alloc(0);

  beforeAll(async () => {
    t = await startApp('sqlite', {
      ALLOW_PRIVATE_URLS: '1',
      SYNC_TIMEOUT_MS: String(BUDGET_MS),
      ENGINE_MEMORY_MB: String(MEMORY_MB),
      ENGINE_PROCESSES: '2',
    });
    key = await t.newKey('hostile@example.com', 'free', 'live');
    files = await serveFiles();
    for (const c of HOSTILE_CASES) files.put(`${c.name}.pdf`, c.build());
    files.put('invoice.pdf', invoice);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    // The engine processes are up before the first case is timed.
    const warm = await post('text', 'invoice.pdf', 'x');
    expect(warm.status).toBe(200);
    // The meter readings below can see a charge: a real edit of the one-page invoice, with the
    // key and without, moves each by one page.
    for (const route of ['edit', 'edit-keyless'] as const) {
      const before = await pagesUsed(route === 'edit');
      const res = await post(route, 'invoice.pdf', 'Amount Due');
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      expect((await pagesUsed(route === 'edit')) - before).toBe(1);
    }
  }, 60_000);

  afterAll(async () => {
    if (table.length > 0) {
      console.log(
        [
          `Concurrent /v1/text of the invoice: its time during the case, and alone just before (median of 3); bar: 2 x alone + ${SIDE_FLOOR_MS} ms.`,
          '| case | route | answer | ms | peak RSS MiB | billed | concurrent text ms (alone) |',
          '|---|---|---|---|---|---|---|',
          ...table,
        ].join('\n'),
      );
    }
    await files?.close();
    await t?.close();
  });

  function post(route: Route, file: string, find: string): Promise<Response> {
    const source = { url: files.url(file) };
    const withKey = route !== 'edit-keyless';
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (withKey) headers.authorization = `Bearer ${key}`;
    const path = route === 'edit-keyless' ? 'edit' : route;
    const body =
      route === 'text'
        ? { source }
        : route === 'preview'
          ? { source, page: 1, width: 600 }
          : // The same word in lower case fits its room, so a readable page really gets edited.
            {
              source,
              edits: [
                { find, replace: find.toLowerCase() === find ? find.toUpperCase() : find.toLowerCase() },
              ],
            };
    return fetch(`${base}/v1/${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  }

  async function pagesUsed(withKey: boolean): Promise<number> {
    if (!withKey) {
      // GET /v1/usage needs a key: the keyless allowance of this client address, from the meter.
      const subject = billingSubject(undefined, '127.0.0.1');
      return (await usageOf(t.app.db, subject, t.env.config.now())).pagesUsed;
    }
    const res = await fetch(`${base}/v1/usage`, {
      headers: withKey ? { authorization: `Bearer ${key}` } : {},
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { pages_used: number }).pages_used;
  }

  /**
   * Peak resident memory of the engine processes during one request (MiB): the highest
   * VmRSS sampled every 20 ms, and the high-water mark (VmHWM) of a process whose mark rose
   * meanwhile (it catches growth between samples; a process killed at its ceiling is gone
   * before its last mark can be read, so bombs show what was seen before the kill).
   */
  function sampleRss(): { stop: () => number } {
    const status = (pid: number, field: string): number | undefined => {
      try {
        const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        return m ? Number(m[1]) / 1024 : undefined;
      } catch {
        return undefined; // the process ended between listing and reading
      }
    };
    const hwmAtStart = new Map<number, number>();
    for (const pid of t.app.engine.pids) hwmAtStart.set(pid, status(pid, 'VmHWM') ?? 0);
    let peak = 0;
    const read = () => {
      for (const pid of t.app.engine.pids) {
        peak = Math.max(peak, status(pid, 'VmRSS') ?? 0);
        const hwm = status(pid, 'VmHWM') ?? 0;
        if (hwm > (hwmAtStart.get(pid) ?? 0)) peak = Math.max(peak, hwm);
      }
    };
    read();
    const timer = setInterval(read, 20);
    return {
      stop: () => {
        clearInterval(timer);
        read();
        return Math.round(peak);
      },
    };
  }

  /** One well-formed /v1/text of the invoice: its status and time to the end of its body. */
  async function side(): Promise<{ status: number; ms: number }> {
    const at = Date.now();
    const res = await post('text', 'invoice.pdf', 'x');
    await res.arrayBuffer();
    return { status: res.status, ms: Date.now() - at };
  }

  async function run(route: Route, file: string, find: string): Promise<Outcome> {
    const withKey = route !== 'edit-keyless';
    // The usual time of the concurrent request, alone, on this service right now.
    const alone: number[] = [];
    for (let i = 0; i < 3; i++) {
      const a = await side();
      expect(a.status).toBe(200);
      alone.push(a.ms);
    }
    const usualMs = alone.sort((a, b) => a - b)[1]!;
    const usedBefore = await pagesUsed(withKey);
    const crashedBefore = t.app.engine.stats.crashed;
    const failedBefore = t.app.engine.stats.failed;
    const rss = sampleRss();
    const started = Date.now();
    const hostile = post(route, file, find).then(async (res) => {
      const ms = Date.now() - started;
      const body = (await res.arrayBuffer().then((b) => Buffer.from(b))) as Buffer;
      let code: string | undefined;
      let message: string | undefined;
      if (res.status >= 400) {
        try {
          const error = (JSON.parse(body.toString('utf8')) as { error?: { code?: string; message?: string } })
            .error;
          code = error?.code;
          message = error?.message;
        } catch {
          code = '(not JSON)';
        }
      }
      return { status: res.status, code, message, ms };
    });
    // A well-formed request on another connection while the hostile one runs.
    await new Promise((r) => setTimeout(r, 50));
    const during = await side();
    const answer = await hostile;
    const peakRssMb = rss.stop();
    const healthz = (await fetch(`${base}/healthz`)).status;
    const billed = (await pagesUsed(withKey)) - usedBefore;
    return {
      ...answer,
      peakRssMb,
      billed,
      crashed: t.app.engine.stats.crashed - crashedBefore,
      failed: t.app.engine.stats.failed - failedBefore,
      healthz,
      sideStatus: during.status,
      sideMs: during.ms,
      usualMs,
    };
  }

  /** The invariants an outcome breaks (none is the goal). */
  function breaches(o: Outcome): string[] {
    const out: string[] = [];
    if (o.status === 200) {
      if (o.billed > 1) out.push(`billed ${o.billed} pages for a one-page document`);
    } else {
      if (!isErrorCode(o.code)) out.push(`untyped ${o.status} (${o.code ?? 'no code'})`);
      else if (ERROR_STATUS[o.code] !== o.status) out.push(`${o.code} with status ${o.status}`);
      else if (o.status >= 500) {
        if (o.code === 'engine_error' && o.crashed === 0 && o.failed === 0)
          out.push(`500 engine_error while no engine process ended (a 422 is due): ${o.message}`);
        else if (o.code !== 'engine_timeout' && o.code !== 'engine_error') out.push(`5xx ${o.code}`);
      }
      if (o.billed !== 0) out.push(`billed ${o.billed} pages for a failed request`);
    }
    if (o.ms > DEADLINE_MS) out.push(`answered after ${o.ms} ms (deadline ${DEADLINE_MS} ms)`);
    if (o.healthz !== 200) out.push(`/healthz ${o.healthz} afterwards`);
    if (o.sideStatus !== 200) out.push(`concurrent well-formed /v1/text answered ${o.sideStatus}`);
    else if (o.sideMs > 2 * o.usualMs + SIDE_FLOOR_MS)
      out.push(`${SLOW_SIDE} ${o.sideMs} ms, past 2 x its usual ${o.usualMs} ms + ${SIDE_FLOOR_MS} ms`);
    return out;
  }

  /**
   * One page object listed 1,500 times, on a plan whose page limit admits it: PDFium counts
   * 1,500 pages, so the edit becomes a job. The job must bill at most the one real page
   * (it fails: the edit refuses a tree whose page objects the two readers count differently).
   */
  it('kids-1500 edit on the scale plan: the job bills at most the one page object', async () => {
    const scaleKey = await t.newKey('hostile-scale@example.com', 'scale', 'live');
    const auth = { authorization: `Bearer ${scaleKey}` };
    const used = async () =>
      ((await (await fetch(`${base}/v1/usage`, { headers: auth })).json()) as { pages_used: number })
        .pages_used;
    const before = await used();
    const res = await fetch(`${base}/v1/edit`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        source: { url: files.url('kids-1500.pdf') },
        edits: [{ find: 'Repeated', replace: 'repeated' }],
      }),
    });
    const answer = (await res.json()) as { job_id?: string; error?: { code: string } };
    let status = String(res.status);
    if (res.status === 202 && answer.job_id) {
      const end = Date.now() + 30_000;
      for (;;) {
        const job = (await (await fetch(`${base}/v1/jobs/${answer.job_id}`, { headers: auth })).json()) as {
          status: string;
        };
        status = `202 → ${job.status}`;
        if (!['queued', 'running'].includes(job.status) || Date.now() > end) break;
        await new Promise((r) => setTimeout(r, 200));
      }
    } else if (answer.error) status += ` ${answer.error.code}`;
    const billed = (await used()) - before;
    table.push(`| kids-1500 | edit (scale plan, job) | ${status} | - | - | ${billed} | - |`);
    const gap = KNOWN_GAPS['kids-1500 edit-scale'];
    // Still broken as recorded: when this fails, the gap is fixed; remove its entry.
    if (gap) expect(billed, `known gap: ${gap}`).toBeGreaterThan(1);
    else expect(billed, status).toBeLessThanOrEqual(1);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  }, 60_000);

  for (const c of HOSTILE_CASES) {
    for (const route of ROUTES) {
      const id = `${c.name} ${route}`;
      it(`${id}: ${c.what}`, async () => {
        const row = (o: Outcome, note = '') =>
          `| ${c.name} | ${route}${note} | ${o.status}${o.code ? ` ${o.code}` : ''} | ${o.ms} | ${o.peakRssMb} | ${o.billed} | ${o.sideMs} (${o.usualMs}) |`;
        let o = await run(route, `${c.name}.pdf`, c.find);
        let found = breaches(o);
        if (found.length > 0 && found.every((b) => b.startsWith(SLOW_SIDE))) {
          // Only the concurrency bar missed: a hostile request that holds the service misses
          // it again; a moment of scheduler noise (other work on the machine) does not. The
          // case runs once more and its second outcome counts; both are in the table.
          table.push(row(o, ' (bar missed, run again)'));
          o = await run(route, `${c.name}.pdf`, c.find);
          found = breaches(o);
        }
        table.push(row(o));
        const limit = REFUSED_BY[c.name];
        if (limit) {
          expect(`${o.status} ${o.code}`, o.message).toBe('422 document_unsupported');
          expect(o.message).toMatch(limit);
          expect(o.ms, 'refused by the scan, before PDFium').toBeLessThan(BUDGET_MS);
        }
        const gap = KNOWN_GAPS[id];
        if (gap) {
          // Still broken as recorded: when this fails, the gap is fixed; remove its entry.
          expect(found, `known gap: ${gap}`).not.toEqual([]);
        } else {
          expect(found).toEqual([]);
        }
      }, 60_000);
    }
  }
});

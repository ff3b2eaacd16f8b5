import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLANS } from '../../src/billing/plans.js';
import type { Principal } from '../../src/kernel/principal.js';
import { corpusPath } from '../helpers/corpus.js';
import { type EditApp, startEditApp } from '../helpers/edit-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';

/** Holds `n` of the account's sync-edit slots until `release` is called. */
function holdSlots(a: EditApp, principal: Principal, n: number) {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const held = Array.from({ length: n }, () => a.t.app.editSlots(principal, () => gate));
  return {
    release: async () => {
      release();
      await Promise.all(held);
    },
  };
}

describe.skipIf(!HAVE_CORPUS)('plan concurrency of synchronous edits', () => {
  let a: EditApp;
  let principal: Principal;

  beforeAll(async () => {
    a = await startEditApp({ 'trivial.pdf': corpusPath('font-tt-subset-libreoffice-trivial.pdf') }, 'conc');
    const row = await a.t.app.db
      .selectFrom('api_keys')
      .select(['id', 'account_id'])
      .where('prefix', '=', a.key.slice(0, 12))
      .executeTakeFirstOrThrow();
    principal = { accountId: row.account_id, keyId: row.id, mode: 'live', plan: 'free' };
  });

  afterAll(async () => {
    await a?.close();
  });

  const edit = () => a.edit('trivial.pdf', [{ op: 'replace', find: 'no such phrase here', replace: 'x' }]);

  it('answers 429 rate_limited with Retry-After above the plan concurrency; jobs still queue', async () => {
    const limit = PLANS.free.concurrency;
    const busy = holdSlots(a, principal, limit);
    const refused = await edit();
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('rate_limited');
    expect(refused.json().error.message).toContain(`Over ${limit} synchronous edits`);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // A job is not a synchronous edit: it queues.
    const queued = await a.edit(
      'trivial.pdf',
      [{ op: 'replace', find: 'no such phrase here', replace: 'x' }],
      {
        async: true,
      },
    );
    expect(queued.statusCode).toBe(202);
    await busy.release();
    const ok = await edit();
    expect(ok.statusCode).not.toBe(429);
    expect(ok.statusCode).toBeLessThan(300);
  });

  it('lets edits through up to the limit, and counts per account', async () => {
    const busy = holdSlots(a, principal, PLANS.free.concurrency - 1);
    expect((await edit()).statusCode).toBeLessThan(300);
    // Another account's slots do not count against this one.
    const other = holdSlots(a, { ...principal, accountId: 'acct_other' }, PLANS.free.concurrency);
    expect((await edit()).statusCode).toBeLessThan(300);
    await busy.release();
    await other.release();
  });
});

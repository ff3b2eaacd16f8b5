import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureAccount } from '../../src/domain/accounts.js';
import { markStored, reserveProduced } from '../../src/domain/files.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { oldGenerationBytesPerCall } from '../helpers/old-generation.js';

/**
 * Issue 18 item 6: what every edit does around the engine (its output's row reserved and
 * marked stored) must not leave garbage in V8's old generation
 * (test/helpers/old-generation.ts; the spread literals of test/billing/meter-garbage.test.ts).
 */
describe('edit bookkeeping garbage', () => {
  let t: TestApp;
  let owner: { accountId: string; mode: 'live' };

  beforeAll(async () => {
    t = await startApp('sqlite');
    const acct = await ensureAccount(t.app.db, 'garbage@example.com', 'scale');
    owner = { accountId: acct.id, mode: 'live' };
  });
  afterAll(async () => t?.close());

  it("an output's reservation and marking stored leave little in the old generation", async () => {
    const perOutput = await oldGenerationBytesPerCall(async () => {
      const f = await reserveProduced(t.app.db, owner, {
        kind: 'output',
        contentType: 'application/pdf',
        ttlMs: 60_000,
        parentId: null,
        now: Date.now(),
      });
      await markStored(t.app.db, f.id, {
        blobKey: f.blobKey,
        size: 1,
        sha256: 'a'.repeat(64),
        produced: true,
      });
    });
    // Measured: about 380 bytes with `{ ...input, maxBytes, blobKey }`, about 50 without.
    expect(perOutput).toBeLessThan(150);
  });
});

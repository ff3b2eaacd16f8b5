import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/app.js';
import type { AccountPlan } from '../../src/billing/plans.js';
import { ensureAccount } from '../../src/domain/accounts.js';
import { createKey } from '../../src/domain/api-keys.js';
import type { KeyMode } from '../../src/kernel/principal.js';
import { type DbKind, makeTestEnv, type TestEnv } from './env.js';

export interface TestApp {
  app: FastifyInstance;
  env: TestEnv;
  /** Creates an account (or reuses it) and returns a fresh key for it. */
  newKey(email?: string, plan?: AccountPlan, mode?: KeyMode): Promise<string>;
  close(): Promise<void>;
}

/** The whole service, built as server.ts builds it, for `app.inject` (no port opened). */
export async function startApp(
  kind: DbKind = 'sqlite',
  envVars: Record<string, string> = {},
): Promise<TestApp> {
  const env = await makeTestEnv(kind, envVars);
  const app = await buildServer(env.config);
  return {
    app,
    env,
    async newKey(email = 'owner@example.com', plan: AccountPlan = 'free', mode: KeyMode = 'live') {
      const account = await ensureAccount(app.db, email, plan);
      return (await createKey(app.db, account.id, mode)).key;
    },
    async close() {
      await app.close();
      await env.cleanup();
    },
  };
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

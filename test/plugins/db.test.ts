import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import db from '../../src/plugins/app/db.js';
import { DB_KINDS, makeTestEnv, type TestEnv } from '../helpers/env.js';

describe.each(DB_KINDS)('db plugin on %s', (kind) => {
  let env: TestEnv | undefined;
  afterEach(async () => {
    await env?.cleanup();
  });

  it('opens, migrates, decorates and closes with the server', async () => {
    env = await makeTestEnv(kind);
    const app = Fastify();
    app.decorate('config', env.config);
    await app.register(db);
    await app.ready();
    expect(app.dbKind).toBe(kind);
    expect(await app.db.selectFrom('accounts').selectAll().execute()).toEqual([]);
    await app.close();
    // Closed with the server: no open handle keeps the test process (or the database) alive.
    await expect(app.db.selectFrom('accounts').selectAll().execute()).rejects.toThrow();
  });
});

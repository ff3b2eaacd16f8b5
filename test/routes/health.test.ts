import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import db from '../../src/plugins/app/db.js';
import errors from '../../src/plugins/app/errors.js';
import schemas from '../../src/plugins/app/schemas.js';
import health from '../../src/routes/health.js';
import { makeTestEnv, type TestEnv } from '../helpers/env.js';

describe('GET /healthz', () => {
  let env: TestEnv;
  let app: FastifyInstance;

  afterEach(async () => {
    await app?.close();
    await env?.cleanup();
  });

  async function build() {
    env = await makeTestEnv('sqlite');
    app = Fastify({ logger: false });
    app.decorate('config', env.config);
    await app.register(errors);
    await app.register(schemas);
    await app.register(db);
    await app.register(health);
    await app.ready();
  }

  it('answers ok without a key while the database answers', async () => {
    await build();
    const res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('answers 500 engine_error when the database does not', async () => {
    await build();
    await app.db.destroy();
    const res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(500);
    expect(res.json().error).toMatchObject({ code: 'engine_error', message: 'database not answering' });
  });
});

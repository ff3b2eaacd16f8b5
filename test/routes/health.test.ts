import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { EnginePool } from '../../src/engine/pool.js';
import db from '../../src/plugins/app/db.js';
import errors from '../../src/plugins/app/errors.js';
import schemas from '../../src/plugins/app/schemas.js';
import health from '../../src/routes/health.js';
import { expensiveShadingPdf } from '../engine/hostile-pdf.js';
import { makeTestEnv, type TestEnv } from '../helpers/env.js';

describe('GET /healthz', () => {
  let env: TestEnv;
  let app: FastifyInstance;

  afterEach(async () => {
    await app?.close();
    await env?.cleanup();
  });

  async function build(engine?: { timeoutMs: number }) {
    env = await makeTestEnv('sqlite');
    app = Fastify({ logger: false });
    app.decorate('config', env.config);
    if (engine) {
      const pool = new EnginePool({ pdfiumLibPath: env.config.pdfiumLibPath, processes: 1, ...engine });
      app.decorate('engine', pool);
      app.addHook('onClose', () => pool.close());
    }
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

  it("reports the engine's processes and queue", async () => {
    await build({ timeoutMs: 30_000 });
    await app.engine.open(expensiveShadingPdf(10));
    const res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'ok',
      engine: { processes: 1, busy: 0, free: 1, starting: 0, queued: 0, saturated_ms: 0, budget_ms: 30_000 },
    });
  });

  it('answers 503 when no engine process has been free for longer than the budget', async () => {
    await build({ timeoutMs: 200 });
    await app.engine.open(expensiveShadingPdf(10), undefined, 30_000);
    // A call with a longer budget than the pool's (as a job has) holds the only process.
    const long = app.engine
      .render({ pdf: expensiveShadingPdf(4000), page: 1, width: 1000, maxBytes: 1 << 20 }, 1_500)
      .catch((e: unknown) => e);
    const queued = app.engine.open(expensiveShadingPdf(10), undefined, 30_000);
    let res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json().engine).toMatchObject({ busy: 1, free: 0, queued: 1 });
    await new Promise((r) => setTimeout(r, 400));
    res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(503);
    const body = res.json();
    expect(body.status).toBe('engine_saturated');
    expect(body.engine).toMatchObject({ busy: 1, free: 0, queued: 1, budget_ms: 200 });
    expect(body.engine.saturated_ms).toBeGreaterThan(200);
    // The long call ends at its budget, the queued one is served: healthy again.
    expect(((await long) as { code?: string }).code).toBe('engine_timeout');
    await queued;
    res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('ok');
  });
});

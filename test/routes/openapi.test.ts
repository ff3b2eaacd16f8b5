import { Type } from '@sinclair/typebox';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/kernel/error-codes.js';
import schemas from '../../src/plugins/app/schemas.js';
import swagger from '../../src/plugins/external/swagger.js';
import docs from '../../src/routes/docs.js';
import { errorResponses } from '../../src/schemas/errors.js';
import { ref } from '../../src/schemas/ref.js';
import { Queued } from '../../src/schemas/results.js';
import { startApp, type TestApp } from '../helpers/app.js';

// biome-ignore lint/suspicious/noExplicitAny: walking a parsed JSON document
type Json = Record<string, any>;

describe('GET /openapi.json and /docs', () => {
  let t: TestApp;
  let doc: Json;
  beforeAll(async () => {
    t = await startApp('sqlite');
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = JSON.parse(res.body);
  });
  afterAll(async () => t?.close());

  it('is OpenAPI 3.1 with version 0.1.0', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('0.1.0');
  });

  it('documents every route registered in Fastify', () => {
    expect(t.app.registeredRoutes.size).toBeGreaterThan(10);
    for (const route of t.app.registeredRoutes) {
      const [method, path] = route.split(' ') as [string, string];
      expect(doc.paths[path]?.[method.toLowerCase()], route).toBeDefined();
      expect(doc.paths[path][method.toLowerCase()]['x-pdfedit-status'], route).toBeUndefined();
    }
  });

  it('describes every SPEC endpoint, the headers and the closed error list', () => {
    for (const [method, path] of [
      ['get', '/healthz'],
      ['get', '/v1/limits'],
      ['get', '/v1/usage'],
      ['get', '/source'],
      ['post', '/v1/files'],
      ['delete', '/v1/files/{file_id}'],
      ['get', '/v1/files/{file_id}/content'],
      ['put', '/v1/files/{file_id}/content'],
      ['post', '/v1/edit'],
      ['get', '/v1/jobs'],
      ['get', '/v1/jobs/{job_id}'],
      ['post', '/v1/batch'],
      ['post', '/v1/text'],
      ['post', '/v1/preview'],
      ['get', '/v1/fonts'],
      ['post', '/v1/billing/webhook/{provider}'],
      ['post', '/v1/billing/checkout'],
    ] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    const headers = Object.keys(doc.components.headers);
    for (const h of [
      'X-Request-Id',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'Retry-After',
    ]) {
      expect(headers).toContain(h);
    }
    expect(doc.components.parameters.IdempotencyKey.schema.maxLength).toBe(255);
    const codes = doc.components.schemas.Error.properties.error.properties.code.anyOf.map(
      (c: Json) => c.const,
    );
    expect(codes.sort()).toEqual(Object.keys(ERROR_STATUS).sort());
    expect(doc.paths['/v1/limits'].get.responses['200'].headers['X-RateLimit-Reset']).toBeDefined();
    expect(doc.paths['/v1/edit'].post.parameters[0].$ref).toBe('#/components/parameters/IdempotencyKey');
  });

  it('is generated from the routes: summary, tags, security, responses and error refs on every operation', () => {
    for (const [path, ops] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(ops as Json) as [string, Json][]) {
        const name = `${method} ${path}`;
        expect(op.summary, name).toBeTruthy();
        expect(op.operationId, name).toBeTruthy();
        expect(op.tags?.length, name).toBeGreaterThan(0);
        expect(Array.isArray(op.security), name).toBe(true);
        for (const [status, response] of Object.entries(op.responses as Json) as [string, Json][]) {
          if (Number(status) >= 400) expect(response.$ref, name).toBe(`#/components/responses/E${status}`);
          else {
            expect(response.description, `${name} ${status}`).not.toBe('Default Response');
            expect(response.headers['X-Request-Id'], `${name} ${status}`).toBeDefined();
          }
        }
        expect(JSON.stringify(op), name).not.toContain('x-pdfedit-rate-limited');
      }
    }
    // Security and rate-limit headers follow the hooks each route runs.
    expect(doc.paths['/v1/edit'].post.security).toEqual([{ bearerAuth: [] }, {}]);
    expect(doc.paths['/v1/text'].post.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    expect(doc.paths['/healthz'].get.responses['200'].headers['X-RateLimit-Limit']).toBeUndefined();
    expect(doc.paths['/v1/files/{file_id}/content'].get.security).toEqual([]);
    // Bodies Fastify does not validate are still documented.
    expect(Object.keys(doc.paths['/v1/edit'].post.requestBody.content).sort()).toEqual([
      'application/json',
      'multipart/form-data',
    ]);
    expect(doc.paths['/v1/edit'].post.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/EditRequest',
    );
    expect(doc.paths['/v1/files/{file_id}/content'].put.requestBody.content['application/pdf']).toBeDefined();
    expect(doc.paths['/v1/files'].post.requestBody.required).toBe(false);
    expect(doc.info.license.identifier).toBe('AGPL-3.0-only');
    expect(doc.components.securitySchemes.bearerAuth.scheme).toBe('bearer');
    expect(doc.webhooks.jobDone.post.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/JobDone',
    );
    expect(doc.components.schemas.EditRequest.examples.length).toBeGreaterThan(0);
  });

  it('validates and serializes through the named schemas', async () => {
    const key = await t.newKey('openapi-shape@example.com');
    const auth = { authorization: `Bearer ${key}` };
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/v1/text',
      headers: auth,
      payload: { source: { file_id: 'file_x' }, colour: 'red' },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toMatchObject({ code: 'invalid_request' });
    expect(unknown.json().error.message).toContain('colour');
    const limits = await t.app.inject({ method: 'GET', url: '/v1/limits', headers: auth });
    expect(limits.statusCode).toBe(200);
    expect(limits.json().plan).toBe('free');
    const none = await t.app.inject({ method: 'GET', url: '/v1/jobs/job_nope', headers: auth });
    expect(none.statusCode).toBe(404);
    expect(Object.keys(none.json())).toEqual(['error']);
  });

  it('resolves every $ref and uses 2020-12 tuples', () => {
    const text = JSON.stringify(doc);
    for (const [, ref] of text.matchAll(/"\$ref":"#\/([^"]+)"/g)) {
      // biome-ignore lint/suspicious/noExplicitAny: walking a parsed JSON document
      const target = ref!.split('/').reduce<any>((node, part) => node?.[part], doc);
      expect(target, ref).toBeDefined();
    }
    expect(text).not.toContain('"additionalItems"');
    expect(doc.components.schemas.PreviewRequest.properties.region.prefixItems).toHaveLength(4);
  });

  it('serves /docs as self-contained HTML generated from the same document', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('/v1/edit');
    expect(res.body).toContain('X-RateLimit-Reset');
    expect(res.body).not.toMatch(/<script|https?:\/\/(?!127\.)/);
  });
});

describe('a route declared the project way', () => {
  it('appears with its schemas, and not at all when hidden', async () => {
    const app = Fastify();
    await app.register(schemas);
    await app.register(swagger);
    await app.register(docs);
    app.post(
      '/v1/example',
      {
        schema: {
          summary: 'An example',
          tags: ['service'],
          body: Type.Object({ n: Type.Integer() }, { additionalProperties: false }),
          response: { 202: ref(Queued), ...errorResponses(400) },
        },
      },
      async (_request, reply) => reply.code(202).send({ job_id: 'job_1' }),
    );
    app.get('/account/example', { schema: { hide: true } }, async () => 'page');
    await app.ready();
    const doc = JSON.parse((await app.inject({ method: 'GET', url: '/openapi.json' })).body);
    const op = doc.paths['/v1/example'].post;
    expect(op.operationId).toBe('AnExample');
    expect(op.security).toEqual([]);
    expect(op.requestBody.content['application/json'].schema.properties.n.type).toBe('integer');
    expect(op.responses['202'].content['application/json'].schema.$ref).toBe('#/components/schemas/Queued');
    expect(op.responses['400'].$ref).toBe('#/components/responses/E400');
    expect(doc.paths['/account/example']).toBeUndefined();
    expect(app.registeredRoutes.has('GET /account/example')).toBe(false);
    // Every SPEC operation is served now: nothing is left marked planned.
    for (const ops of Object.values(doc.paths) as Record<string, Record<string, unknown>>[])
      for (const op of Object.values(ops)) expect(op['x-pdfedit-status']).toBeUndefined();
    await app.close();
  });
});

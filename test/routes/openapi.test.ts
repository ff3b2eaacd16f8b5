import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/domain/error-codes.js';
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

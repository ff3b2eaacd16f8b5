import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { openApiDocument, openApiPath } from '../openapi/document.js';
import { renderDocsHtml } from '../openapi/html.js';

/**
 * GET /openapi.json (OpenAPI 3.1, info.version 0.1.0) and GET /docs (the same document as
 * HTML). Registered first: its onRoute hook records every route the app registers, so the
 * served document marks operations not yet served here as planned, and tests can check
 * that every registered route is documented (`fastify.registeredRoutes`).
 */
export default fp(
  async function docs(fastify: FastifyInstance) {
    const registered = new Set<string>();
    fastify.decorate('registeredRoutes', registered);
    fastify.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const m of methods) if (m !== 'HEAD') registered.add(`${m} ${openApiPath(route.url)}`);
    });
    let json: string | undefined;
    let html: string | undefined;
    const build = () => {
      const doc = openApiDocument({ implemented: registered });
      json = JSON.stringify(doc);
      html = renderDocsHtml(doc);
    };
    fastify.get('/openapi.json', async (_request, reply) => {
      if (!json) build();
      return reply
        .type('application/json; charset=utf-8')
        .header('Cache-Control', 'public, max-age=300')
        .send(json);
    });
    fastify.get('/docs', async (_request, reply) => {
      if (!html) build();
      return reply
        .type('text/html; charset=utf-8')
        .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
        .send(html);
    });
  },
  { name: 'docs' },
);

declare module 'fastify' {
  interface FastifyInstance {
    /** `METHOD /openapi/{path}` of every route registered (HEAD excluded). */
    registeredRoutes: Set<string>;
  }
}

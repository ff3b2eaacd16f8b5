import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { PdfeditApi } from '../mcp/api.js';
import { injectFetch } from '../mcp/inject-fetch.js';
import { createMcpServer } from '../mcp/server.js';
import { errorResponses } from '../schemas/errors.js';

/** A JSON-RPC message of the Model Context Protocol (the SDK checks the rest). */
const JsonRpcMessage = Type.Object(
  { jsonrpc: Type.Literal('2.0') },
  { additionalProperties: true, description: 'A JSON-RPC 2.0 message of the Model Context Protocol.' },
);

/**
 * POST /mcp: the agent front-end over streamable HTTP (stateless, JSON answers). The
 * caller's Bearer key authenticates here and rides along on every API call the tools make
 * (in-process), so the plan, rate limit and metering are the key's, as on the API. Local
 * files (`path`, `output_path`) exist only in the stdio server. Not in /openapi.json: the
 * protocol is MCP's, not this API's.
 */
export default async function mcpRoutes(fastify: FastifyInstance): Promise<void> {
  const fetch = injectFetch(fastify);

  fastify.post(
    '/mcp',
    {
      onRequest: [fastify.requireKey, fastify.rateLimit],
      schema: {
        hide: true,
        summary: 'MCP (streamable HTTP)',
        tags: ['agents'],
        body: Type.Union([JsonRpcMessage, Type.Array(JsonRpcMessage, { minItems: 1, maxItems: 100 })]),
        response: errorResponses(400, 401, 429),
      },
    },
    async (request, reply) => {
      const api = new PdfeditApi({
        baseUrl: fastify.config.publicBaseUrl,
        key: request.headers.authorization!.replace(/^Bearer +/i, '').trim(),
        fetch,
      });
      const server = createMcpServer({ api, maxWaitSeconds: 60 });
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      // A hijacked reply skips the onSend hooks: carry over the headers set so far
      // (X-RateLimit-*) and the request id.
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) reply.raw.setHeader(name, value);
      }
      reply.raw.setHeader('X-Request-Id', request.id);
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );

  // Stateless server: no event stream to resume and no session to end (MCP: answer 405).
  for (const method of ['GET', 'DELETE'] as const) {
    fastify.route({
      method,
      url: '/mcp',
      schema: { hide: true },
      handler: async (request, reply) =>
        reply
          .code(405)
          .header('allow', 'POST')
          .send({
            jsonrpc: '2.0',
            error: {
              code: -32000,
              message: `Method ${request.method} not allowed: this MCP endpoint is stateless; POST messages.`,
            },
            id: null,
          }),
    });
  }
}

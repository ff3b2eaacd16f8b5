import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { PROJECT_ROOT } from '../config.js';
import { errorResponses } from '../schemas/errors.js';
import { FontsResponse } from '../schemas/fonts.js';
import { ref } from '../schemas/ref.js';

interface FontEntry {
  name: string;
  family: string;
  style: string;
  kind: 'metric-twin' | 'look-alike';
  metric_compatible_with: string[];
}

let cached: FontEntry[] | undefined;

/**
 * The installed fonts, read once from the addon (a directory scan; no PDFium, no document),
 * so the route does not take an engine thread.
 */
function installedFonts(): FontEntry[] {
  if (!cached) {
    const require = createRequire(import.meta.url);
    const native = require(path.join(PROJECT_ROOT, 'native', 'index.js')) as { listFonts(): FontEntry[] };
    cached = native.listFonts();
  }
  return cached;
}

/** GET /v1/fonts: the fonts new text can be written in, by the name `style.font` takes. */
export default async function fontRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.get(
    '/v1/fonts',
    {
      onRequest: [fastify.requireKey, fastify.rateLimit],
      schema: {
        summary: 'List fonts',
        tags: ['read'],
        response: { 200: ref(FontsResponse), ...errorResponses(401, 429) },
      },
    },
    async () => ({ fonts: installedFonts() }),
  );
}

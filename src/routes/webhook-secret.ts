import type { FastifyInstance } from 'fastify';
import { getWebhookSecret, rotateWebhookSecret } from '../domain/accounts.js';
import { ApiError } from '../kernel/api-error.js';
import { errorResponses } from '../schemas/errors.js';
import { ref } from '../schemas/ref.js';
import { WebhookSecret } from '../schemas/webhook-secret.js';

/**
 * GET /v1/webhook-secret and POST /v1/webhook-secret/rotate: the secret that signs the
 * account's job webhooks (SPEC Authentication 7), read and replaced with an API key, for
 * the command-line tool (`pdfedit webhook-secret [--rotate]`).
 */
export default async function webhookSecretRoutes(fastify: FastifyInstance): Promise<void> {
  const rl = [fastify.requireKey, fastify.rateLimit];

  fastify.get(
    '/v1/webhook-secret',
    {
      onRequest: rl,
      schema: {
        summary: 'Read the webhook secret',
        description:
          'The key of the X-Signature HMAC on outbound job webhooks. One secret per account, for both key modes.',
        tags: ['account'],
        response: { 200: ref(WebhookSecret), ...errorResponses(401, 429) },
      },
    },
    async (request) => {
      const secret = await getWebhookSecret(fastify.db, request.principal!.accountId);
      if (secret === undefined)
        throw new ApiError('unauthorized', 'The account of this key no longer exists.');
      return { webhook_secret: secret };
    },
  );

  fastify.post(
    '/v1/webhook-secret/rotate',
    {
      onRequest: rl,
      schema: {
        summary: 'Rotate the webhook secret',
        description:
          'Replaces the secret at once: webhooks sent from now on are signed with the new one, and the old one stops working.',
        tags: ['account'],
        response: { 200: ref(WebhookSecret), ...errorResponses(401, 429) },
      },
    },
    async (request) => {
      const accountId = request.principal!.accountId;
      if ((await getWebhookSecret(fastify.db, accountId)) === undefined) {
        throw new ApiError('unauthorized', 'The account of this key no longer exists.');
      }
      return { webhook_secret: await rotateWebhookSecret(fastify.db, accountId) };
    },
  );
}

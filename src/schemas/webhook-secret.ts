import { Type } from '@sinclair/typebox';

/** GET /v1/webhook-secret and POST /v1/webhook-secret/rotate: the key that signs job webhooks. */
export const WebhookSecret = Type.Object(
  {
    webhook_secret: Type.String({
      description:
        'whsec_…: the key of the hex HMAC-SHA256 in the X-Signature header of every outbound job webhook.',
    }),
  },
  {
    $id: 'WebhookSecret',
    additionalProperties: true,
    description: "The account's webhook signing secret (the same for live and test keys).",
    examples: [{ webhook_secret: 'whsec_3VdK9pQ2xY7mN4bR8sT1uW6z' }],
  },
);

import { Type } from '@sinclair/typebox';
import { Iso } from './common.js';

/** POST /v1/billing/checkout (API-DECISIONS "Endpoint bodies"): a plan or a credit pack. */
export const CheckoutRequest = Type.Union(
  [
    Type.Object(
      { plan: Type.Union(['starter', 'growth', 'scale'].map((p) => Type.Literal(p))) },
      { additionalProperties: false },
    ),
    Type.Object(
      { pack: Type.Union([Type.Literal('try_it'), Type.Literal('large')]) },
      { additionalProperties: false },
    ),
  ],
  { $id: 'CheckoutRequest', examples: [{ plan: 'starter' }] },
);

export const CheckoutResult = Type.Object(
  { url: Type.String(), expires_at: Iso },
  { $id: 'CheckoutResult', additionalProperties: true },
);

export const Ack = Type.Object(
  {},
  { $id: 'Ack', additionalProperties: true, description: 'Acknowledgement (open object).' },
);

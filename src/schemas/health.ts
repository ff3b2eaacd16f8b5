import { Type } from '@sinclair/typebox';

/** GET /healthz. */
export const Health = Type.Object(
  { status: Type.Literal('ok') },
  { $id: 'Health', additionalProperties: false, description: 'The API and its database answer.' },
);

import { type Static, type TSchema, Type } from '@sinclair/typebox';

/**
 * A reference to a named schema (one with `$id`, added to Fastify with `addSchema` by the
 * schemas plugin) that keeps the static type of the schema for the TypeBox type provider.
 * Fastify validates and serializes through the reference; @fastify/swagger writes it as
 * `#/components/schemas/<$id>` in the OpenAPI document.
 */
export function ref<T extends TSchema>(schema: T, options: { description?: string } = {}) {
  if (!schema.$id) throw new Error('ref(): the schema has no $id');
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id, options));
}

/**
 * A response object: open (members may be added in later versions, API-DECISIONS
 * "conventions"), so the serializer passes members this schema does not name through
 * rather than dropping them.
 */
export const OPEN = { additionalProperties: true } as const;

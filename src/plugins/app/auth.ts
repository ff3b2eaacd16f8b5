import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { lookupKey } from '../../domain/api-keys.js';
import type { TermsAcceptance } from '../../domain/terms.js';
import { ApiError } from '../../kernel/api-error.js';
import type { Principal } from '../../kernel/principal.js';

export type KeyHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

const HINT_FORMAT =
  'Send the header as "Authorization: Bearer sk_live_…" (or sk_test_…), one space, no quotes.';
const HINT_KEYS = 'Use a current key from the account page, or create one with `pdfedit admin create-key`.';

/** The token of an `Authorization: Bearer <token>` header; the scheme is case-insensitive
 * (RFC 9110 §11.1). Throws 401 for any other shape. */
function bearerToken(header: string): string {
  const m = /^Bearer +(\S+) *$/i.exec(header);
  if (!m?.[1]) {
    throw new ApiError('unauthorized', 'The Authorization header is not of the form "Bearer <API key>".', {
      hint: HINT_FORMAT,
    });
  }
  return m[1];
}

async function resolve(
  fastify: FastifyInstance,
  request: FastifyRequest,
  header: string,
): Promise<Principal> {
  const found = await lookupKey(fastify.db, bearerToken(header));
  switch (found.status) {
    case 'ok':
      request.accountHold = found.hold;
      request.accountTerms = found.terms;
      return found.principal;
    case 'malformed':
      throw new ApiError('unauthorized', 'The API key is malformed: keys start with sk_live_ or sk_test_.', {
        hint: HINT_FORMAT,
      });
    case 'unknown':
      throw new ApiError('unauthorized', 'Unknown API key.', { hint: HINT_KEYS });
    case 'revoked':
      throw new ApiError('unauthorized', 'This API key has been revoked.', { hint: HINT_KEYS });
  }
}

/**
 * Bearer-key authentication. Routes opt in with a hook:
 * `{ onRequest: fastify.requireKey }` (401 without a valid key) or
 * `{ onRequest: fastify.optionalKey }` (keyless allowed; a key that is sent must be valid,
 * so a typo in a key never silently downgrades a paying caller to the free tier).
 */
export default fp(
  async function auth(fastify: FastifyInstance) {
    fastify.decorateRequest('principal', undefined);
    fastify.decorateRequest('accountHold', undefined);
    fastify.decorateRequest('accountTerms', undefined);

    const requireKey: KeyHook = async (request) => {
      const header = request.headers.authorization;
      if (header === undefined) {
        throw new ApiError('unauthorized', 'No API key: the Authorization header is missing.', {
          hint: HINT_FORMAT,
        });
      }
      request.principal = await resolve(fastify, request, header);
    };

    const optionalKey: KeyHook = async (request) => {
      const header = request.headers.authorization;
      if (header === undefined) return;
      request.principal = await resolve(fastify, request, header);
    };

    fastify.decorate('requireKey', requireKey);
    fastify.decorate('optionalKey', optionalKey);
  },
  { name: 'auth', dependencies: ['db'] },
);

declare module 'fastify' {
  interface FastifyInstance {
    requireKey: KeyHook;
    optionalKey: KeyHook;
  }
  interface FastifyRequest {
    /** Set by requireKey/optionalKey; undefined for keyless calls. */
    principal?: Principal;
    /** The principal's account hold as read with its key (null: none); undefined when the
     * key lookup did not read it (the hold check then reads the account). */
    accountHold?: string | null;
    /** The account's acceptance of the document-integrity terms as read with its key
     * (undefined when the key lookup did not read it: the edit then reads the account). */
    accountTerms?: TermsAcceptance;
  }
}

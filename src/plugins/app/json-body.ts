import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../kernel/api-error.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The `charset` parameter of a Content-Type, lower case, without quotes (undefined if absent). */
function charsetOf(contentType: string | undefined): string | undefined {
  for (const param of (contentType ?? '').split(';').slice(1)) {
    const [name, ...rest] = param.split('=');
    if (name?.trim().toLowerCase() === 'charset') {
      return rest
        .join('=')
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase();
    }
  }
  return undefined;
}

/**
 * The text of a JSON body: UTF-8 only (RFC 8259 §8.1), strictly decoded. Node's decoding
 * would turn invalid bytes into U+FFFD and let a different string than the one sent reach
 * the edit; a body declared in another charset would be read as the wrong text. Both
 * answer 400. A leading byte-order mark is dropped, as RFC 8259 allows.
 */
export function decodeJsonText(body: Buffer, contentType: string | undefined): string {
  const charset = charsetOf(contentType);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ApiError('invalid_request', `The body's charset "${charset}" is not accepted: JSON is UTF-8.`, {
      hint: 'Send Content-Type: application/json (optionally charset=utf-8) with UTF-8 text.',
    });
  }
  try {
    return utf8.decode(body);
  } catch {
    throw new ApiError('invalid_request', 'The JSON body is not valid UTF-8.', {
      hint: 'Encode the JSON text as UTF-8; escape other bytes as \\u sequences inside strings.',
    });
  }
}

/**
 * The service's JSON body parser: strict UTF-8 (decodeJsonText), then Fastify's own JSON
 * parser with prototype-poisoning keys refused.
 */
export default fp(
  async function jsonBody(fastify: FastifyInstance) {
    const parseJson = fastify.getDefaultJsonParser('error', 'error');
    fastify.removeContentTypeParser('application/json');
    fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      let text: string;
      try {
        text = decodeJsonText(body as Buffer, request.headers['content-type']);
      } catch (err) {
        return done(err as Error, undefined);
      }
      parseJson(request, text, done);
    });
  },
  { name: 'json-body' },
);

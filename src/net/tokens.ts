import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config.js';

/**
 * Signed file links (SPEC "Authentication" 5): the token in `?token=` is the whole
 * authorisation of a content URL, so it binds everything the link may do.
 *
 * Format: `<expiresAt ms, base36>.<HMAC-SHA256, base64url>`. The MAC covers a version tag,
 * the file id, the direction and the expiry, so an upload link cannot download, a link for
 * one file cannot open another, and the expiry cannot be moved. The account and key mode
 * are not in the token: the file id is unique and the file row already carries them.
 */

export type TokenDirection = 'get' | 'put';

export type TokenCheck = 'ok' | 'invalid' | 'expired';

const VERSION = 'pdfedit-file-link-v1';

function mac(secret: Buffer, fileId: string, direction: TokenDirection, expiresAt: number): Buffer {
  // Separator \n cannot occur in a file id or direction, so fields cannot be shifted.
  return createHmac('sha256', secret).update(`${VERSION}\n${fileId}\n${direction}\n${expiresAt}`).digest();
}

export function signFileToken(
  secret: Buffer,
  fileId: string,
  direction: TokenDirection,
  expiresAt: number,
): string {
  const exp = Math.floor(expiresAt);
  return `${exp.toString(36)}.${mac(secret, fileId, direction, exp).toString('base64url')}`;
}

/**
 * Checks a token for this file and direction. The MAC is compared before the expiry is
 * looked at, so 'expired' is only ever said of a token we issued.
 */
export function verifyFileToken(
  secret: Buffer,
  token: string,
  fileId: string,
  direction: TokenDirection,
  now: number = Date.now(),
): TokenCheck {
  const match = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return 'invalid';
  const exp = Number.parseInt(match[1]!, 36);
  if (!Number.isSafeInteger(exp)) return 'invalid';
  const given = Buffer.from(match[2]!, 'base64url');
  const expected = mac(secret, fileId, direction, exp);
  // Canonical form only: base64url with trailing bits set would decode to the same bytes.
  if (given.length !== expected.length || given.toString('base64url') !== match[2]) return 'invalid';
  if (!timingSafeEqual(given, expected)) return 'invalid';
  return now < exp ? 'ok' : 'expired';
}

/**
 * The content URL of a file. Built from PUBLIC_BASE_URL only: a link derived from the
 * request's Host header could be pointed at an attacker's host (host header poisoning).
 */
export function fileUrl(
  config: Config,
  fileId: string,
  direction: TokenDirection,
  expiresAt: number,
): string {
  const token = signFileToken(config.tokenSecret, fileId, direction, expiresAt);
  return `${config.publicBaseUrl}/v1/files/${encodeURIComponent(fileId)}/content?token=${token}`;
}

import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Characters needed to write any `bytes`-long number in base 62: ceil(8·bytes / log2 62). */
export function base62Length(bytes: number): number {
  return Math.ceil((bytes * 8) / Math.log2(62));
}

/**
 * Base62 of `bytes` random bytes, left-padded to a fixed length so every token of a kind
 * has the same shape (a format check can then be exact). Base62 rather than base64url:
 * no `-`/`_`, so a double-click selects the whole key and nothing needs URL escaping.
 */
export function randomBase62(bytes: number): string {
  let n = BigInt(`0x${randomBytes(bytes).toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(base62Length(bytes), '0');
}

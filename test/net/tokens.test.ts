import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import { fileUrl, signFileToken, verifyFileToken } from '../../src/net/tokens.js';

const secret = randomBytes(32);
const later = Date.now() + 60_000;

describe('file tokens', () => {
  it('accepts its own token for the same file and direction', () => {
    const t = signFileToken(secret, 'file_a', 'get', later);
    expect(verifyFileToken(secret, t, 'file_a', 'get')).toBe('ok');
  });

  it('refuses the other direction, another file and another secret', () => {
    const put = signFileToken(secret, 'file_a', 'put', later);
    expect(verifyFileToken(secret, put, 'file_a', 'get')).toBe('invalid');
    const get = signFileToken(secret, 'file_a', 'get', later);
    expect(verifyFileToken(secret, get, 'file_a', 'put')).toBe('invalid');
    expect(verifyFileToken(secret, get, 'file_b', 'get')).toBe('invalid');
    expect(verifyFileToken(randomBytes(32), get, 'file_a', 'get')).toBe('invalid');
  });

  it('refuses tampering with the expiry or the MAC, and junk', () => {
    const t = signFileToken(secret, 'file_a', 'get', later);
    const [exp, sig] = t.split('.') as [string, string];
    const moved = `${(Number.parseInt(exp, 36) + 1_000_000).toString(36)}.${sig}`;
    expect(verifyFileToken(secret, moved, 'file_a', 'get')).toBe('invalid');
    const flipped = `${exp}.${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
    expect(verifyFileToken(secret, flipped, 'file_a', 'get')).toBe('invalid');
    for (const junk of ['', '.', 'abc', `${exp}.`, `${t}x`, `${exp}.${sig}=`]) {
      expect(verifyFileToken(secret, junk, 'file_a', 'get')).toBe('invalid');
    }
  });

  it('expires', () => {
    const t = signFileToken(secret, 'file_a', 'get', Date.now() - 1);
    expect(verifyFileToken(secret, t, 'file_a', 'get')).toBe('expired');
    const soon = signFileToken(secret, 'file_a', 'get', 2_000);
    expect(verifyFileToken(secret, soon, 'file_a', 'get', 1_999)).toBe('ok');
    expect(verifyFileToken(secret, soon, 'file_a', 'get', 2_000)).toBe('expired');
  });

  it('builds links from PUBLIC_BASE_URL', () => {
    const config = { publicBaseUrl: 'https://api.example.com', tokenSecret: secret } as Config;
    const url = new URL(fileUrl(config, 'file_a', 'put', later));
    expect(url.origin).toBe('https://api.example.com');
    expect(url.pathname).toBe('/v1/files/file_a/content');
    expect(verifyFileToken(secret, url.searchParams.get('token') ?? '', 'file_a', 'put')).toBe('ok');
  });
});

import ipaddr from 'ipaddr.js';

/**
 * Which addresses an outbound request (source.url, records_url, webhooks) may connect to.
 *
 * The policy is an allowlist: only ipaddr.js's `unicast` range passes. Everything it
 * classifies otherwise (loopback, private, CGNAT, link-local with the 169.254.169.254
 * metadata service, unique-local, multicast, unspecified, broadcast, reserved and
 * documentation ranges, Teredo, …) is refused, so a range we forgot is refused too.
 *
 * IPv6 forms that carry an IPv4 address (v4-mapped, v4-compatible, NAT64, 6to4) are judged
 * by the IPv4 address inside: `::ffff:127.0.0.1` is loopback, `64:ff9b::8.8.8.8` is public.
 */

/** Ranges that `allowPrivate` lets through (tests and private deployments). */
const PRIVATE_RANGES = new Set(['loopback', 'private', 'carrierGradeNat', 'uniqueLocal']);

function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = v6.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  switch (v6.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d
    case 'rfc6052': // NAT64 64:ff9b::a.b.c.d (and 64:ff9b:1::/48, last 32 bits)
      return v4(p[6]!, p[7]!);
    case '6to4': // 2002:AABB:CCDD::/48
      return v4(p[1]!, p[2]!);
  }
  // IPv4-compatible (deprecated) ::a.b.c.d; `::` and `::1` are judged as IPv6 themselves.
  if (p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7]! > 1)) return v4(p[6]!, p[7]!);
  return undefined;
}

/** The range name of an address after unwrapping embedded IPv4, or undefined if unparseable. */
export function addressRange(ip: string): string | undefined {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  // Zone ids (fe80::1%eth0) are only valid on link-local addresses, which are refused anyway.
  if (!ipaddr.isValid(bare)) return undefined;
  let addr = ipaddr.parse(bare);
  if (addr.kind() === 'ipv6') {
    const inner = embeddedIPv4(addr as ipaddr.IPv6);
    if (inner) addr = inner;
  }
  return addr.range();
}

/**
 * True when a connection to `ip` must be refused. Unparseable input is refused.
 * `allowPrivate` admits loopback, RFC 1918, CGNAT and unique-local addresses, never
 * link-local (cloud metadata), multicast, unspecified, broadcast or reserved ones.
 */
export function isForbiddenAddress(ip: string, allowPrivate = false): boolean {
  // ipaddr.isValid accepts shorthand IPv4 ("127.1", "0x7f.1") too; we only get here with
  // addresses from DNS or from the WHATWG-normalised host, which are always dotted quads.
  const range = addressRange(ip);
  if (range === undefined) return true;
  if (range === 'unicast') return false;
  return !(allowPrivate && PRIVATE_RANGES.has(range));
}

/** True when `host` (a URL hostname, brackets allowed) is an IP literal rather than a name. */
export function isIpLiteral(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return ipaddr.IPv6.isValid(bare) || ipaddr.IPv4.isValidFourPartDecimal(bare);
}

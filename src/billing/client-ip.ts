import ipaddr from 'ipaddr.js';

/**
 * The group of client addresses that shares one keyless allowance and rate budget:
 * an IPv4 address alone, an IPv6 address by its /64 (one subscriber usually holds a whole
 * /64, so counting single v6 addresses would give each caller 2^64 allowances).
 * IPv4-mapped IPv6 (`::ffff:1.2.3.4`) counts as the IPv4 address.
 *
 * The address itself comes from `request.ip`: Fastify's trustProxy is set from
 * TRUSTED_PROXIES, so X-Forwarded-For is believed only when the peer is one of them.
 */
export function clientAddressGroup(ip: string): string {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return `raw:${ip}`;
  }
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
    const parts = v6.toNormalizedString().split(':').slice(0, 4);
    return `${parts.map((p) => Number.parseInt(p, 16).toString(16)).join(':')}::/64`;
  }
  return addr.toString();
}

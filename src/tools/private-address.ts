import { BlockList, isIP } from 'node:net';

// Destinations the HTTP tools refuse under AGENTIC_BLOCK_PRIVATE_IPS (spec, Safety controls
// 3): private, loopback, link-local, shared (CGNAT), unspecified, multicast and reserved
// ranges. BlockList matches IPv4-mapped IPv6 (::ffff:a.b.c.d) against the IPv4 rules.
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible form
  ['64:ff9b::', 96], // NAT64: embeds an IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

/** Whether `address` (an IP literal) is a private or otherwise non-public destination. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare);
  if (family === 0) return true; // not an address: refuse rather than guess
  return BLOCKED.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

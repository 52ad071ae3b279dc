import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** Luhn checksum over the digits of `text` (separators ignored). */
export function luhnValid(text: string): boolean {
  let sum = 0;
  let double = false;
  let digits = 0;
  for (let i = text.length - 1; i >= 0; i -= 1) {
    const code = text.charCodeAt(i);
    if (code < 48 || code > 57) continue;
    let d = code - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
    digits += 1;
  }
  return digits > 0 && sum % 10 === 0;
}

/** Issuer prefixes (IIN ranges) of the card networks we recognise, with their lengths. */
export function cardIssuerKnown(digits: string): boolean {
  const n = digits.length;
  const p2 = Number(digits.slice(0, 2));
  const p4 = Number(digits.slice(0, 4));
  const p6 = Number(digits.slice(0, 6));
  if (digits.startsWith('4')) return n === 13 || n === 16 || n === 19; // Visa
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n === 16; // Mastercard
  if (p2 === 34 || p2 === 37) return n === 15; // Amex
  if (digits.startsWith('6011') || p2 === 65 || (p6 >= 622126 && p6 <= 622925))
    return n >= 16 && n <= 19; // Discover
  if (p4 >= 3528 && p4 <= 3589) return n >= 16 && n <= 19; // JCB
  if (p2 === 36 || p2 === 38 || (p4 >= 3000 && p4 <= 3059)) return n >= 14 && n <= 19; // Diners
  if (p2 === 62) return n >= 16 && n <= 19; // UnionPay
  if (/^(?:5018|5020|5038|5893|6304|6759|676[1-3])/.test(digits)) return n >= 12 && n <= 19; // Maestro
  return false;
}

/** IBAN lengths by country (ISO 13616 registry). */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MR: 27,
  MT: 31,
  MU: 30,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  SA: 24,
  SC: 31,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
};

/** ISO 13616 check: known country, right length, mod-97 remainder 1. */
export function ibanValid(text: string): boolean {
  const iban = text.replace(/ /g, '').toUpperCase();
  if (IBAN_LENGTHS[iban.slice(0, 2)] !== iban.length) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const code = char.charCodeAt(0);
    const value = code >= 65 ? code - 55 : code - 48;
    if (value < 0 || value > 35) return false;
    remainder = value > 9 ? (remainder * 100 + value) % 97 : (remainder * 10 + value) % 97;
  }
  return remainder === 1;
}

/**
 * Addresses that identify nobody: loopback, private (RFC 1918 / ULA), link-local,
 * unspecified, broadcast, documentation-free shared ranges. Only public addresses are PII.
 */
const NON_PERSONAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PERSONAL.addSubnet(net, prefix, 'ipv4');
}
NON_PERSONAL.addSubnet('::', 127, 'ipv6');
NON_PERSONAL.addSubnet('fc00::', 7, 'ipv6');
NON_PERSONAL.addSubnet('fe80::', 10, 'ipv6');
NON_PERSONAL.addSubnet('ff00::', 8, 'ipv6');

/** True for a syntactically valid, public (routable) address. */
export function isPublicIp(text: string): boolean {
  if (isIPv4(text)) return !NON_PERSONAL.check(text, 'ipv4');
  if (isIPv6(text)) return !NON_PERSONAL.check(text, 'ipv6');
  return false;
}

/**
 * Addresses that name no particular host anywhere: "this host" / unspecified (0.0.0.0/8,
 * `::`), loopback (127.0.0.0/8, `::1`), multicast and the reserved block up to the broadcast
 * address. Private (RFC 1918), shared (100.64.0.0/10) and link-local addresses do name a
 * host, inside someone's network, and reveal its layout, so they are redacted like public
 * ones; these are not (`127.0.0.1:8010`, `0.0.0.0` in a bind address are configuration).
 */
const NO_HOST = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['127.0.0.0', 8],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NO_HOST.addSubnet(net, prefix, 'ipv4');
}
NO_HOST.addSubnet('::', 127, 'ipv6');
NO_HOST.addSubnet('ff00::', 8, 'ipv6');

/** True for a syntactically valid address that names a host (see NO_HOST): the redacted ones. */
export function isHostIp(text: string): boolean {
  if (isIPv4(text)) return !NO_HOST.check(text, 'ipv4');
  if (isIPv6(text)) return !NO_HOST.check(text, 'ipv6');
  return false;
}

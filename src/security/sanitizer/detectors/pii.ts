import { detector, type Detector } from '../detector.js';
import { FINDING_CATEGORIES as C, SEVERITIES as S } from '../types.js';
import { cardIssuerKnown, ibanValid, isHostIp, luhnValid } from '../validators.js';

/** Characters an IPv6 address (with an embedded IPv4 tail) is made of. */
const IPV6_CHAR = /[0-9A-Fa-f:.]/;

/**
 * Words right before a dotted quad that make it a version or a section number, not an
 * address (`v1.2.3.4`, `version 1.2.3.4`, `pkg@1.2.3.4`, `==1.2.3.4`, `^1.2.3.4`,
 * `section 10.1.2.3`, `§ 10.2.1.4`).
 */
const VERSION_CONTEXT =
  /(?:\bv|\bver(?:sion)?\.?\s{0,3}:?\s{0,3}|(?:==|[<>~!]=|[@^~])\s{0,2}|(?:\b(?:section|sect?\.|chapter|ch\.|clause|appendix|figure|fig\.|table|paragraph|para\.|item|step|rule)|§)\s{0,3})$/i;
/** A remote-login command before `user@`: the quad after the `@` is a host, not a version. */
const LOGIN_BEFORE = /\b(?:ssh|scp|sftp|rsync|mosh|telnet|ftp)\b[^\n]{0,40}@\s{0,2}$/i;

/** True when the text right before a dotted quad says it is not an address. */
function versionBefore(text: string, start: number, at: number): boolean {
  const before = text.slice(Math.max(start, at - 60), at);
  return VERSION_CONTEXT.test(before.slice(-16)) && !LOGIN_BEFORE.test(before);
}

/** Personal data. Every pattern is anchored on word or digit boundaries. */
export const PII_DETECTORS: readonly Detector[] = [
  detector(
    'email_address',
    C.EMAIL,
    S.MEDIUM,
    /(?<![\w.%+-])[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}\b/g,
    {
      prefilter: (t) => t.includes('@'),
      // `git@github.com:org/repo` is an SSH remote, not a person.
      validate: (m) => !/^git@/i.test(m[0]),
    },
  ),
  detector(
    'us_ssn',
    C.PII,
    S.HIGH,
    /(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])/g,
    { prefilter: (t) => t.includes('-') },
  ),
  detector(
    'credit_card',
    C.FINANCIAL,
    S.HIGH,
    /(?<![\d-])(?:\d{4}([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{3})?|\d{4}([ -])\d{6}\2\d{5}|\d{13,19})(?![\d-])/g,
    {
      validate: (m) => {
        const digits = m[0].replace(/[ -]/g, '');
        return cardIssuerKnown(digits) && luhnValid(digits);
      },
    },
  ),
  detector(
    'iban',
    C.FINANCIAL,
    S.HIGH,
    /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g,
    { validate: (m) => ibanValid(m[0]) },
  ),
  detector('phone_e164', C.PHONE, S.MEDIUM, /(?<![\w+])\+[1-9](?:[ .-]?\(?\d\)?){7,14}(?![\d])/g, {
    prefilter: (t) => t.includes('+'),
    validate: (m) => {
      const digits = m[0].replace(/\D/g, '').length;
      return digits >= 8 && digits <= 15;
    },
  }),
  detector(
    'phone_national',
    C.PHONE,
    S.MEDIUM,
    /(?<![\w.+/-])(?:(?:1[ .-])?\(\d{3}\) ?\d{3}[ .-]\d{4}|(?:1[ .-])?\d{3}([ .-])\d{3}\1\d{4}|0\d{1,4}[ ]\d{3,4}[ ]\d{3,4}|0\d{2,4}[ /-]\d{5,8}|0[1-9](?:([ .])\d{2})(?:\2\d{2}){3})(?![\w.-]?\d)/g,
  ),
  detector(
    'ipv4_address',
    C.IP_ADDRESS,
    S.LOW,
    /(?<![\w.])(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}(?![\w]|\.\d)/g,
    {
      prefilter: (t) => t.includes('.'),
      validate: (m, text, start) => isHostIp(m[0]) && !versionBefore(text, start, m.index),
    },
  ),
  // Anchored on the colons (a cheap literal scan), then grown to the whole token and
  // checked with the platform's own IPv6 parser.
  detector('ipv6_address', C.IP_ADDRESS, S.LOW, /:[0-9A-Fa-f]{0,4}:/g, {
    prefilter: (t) => t.includes(':'),
    refine: (m, text, start, end) => {
      let from = m.index;
      // At most 45 characters each way (the longest IPv6 text form): linear on any input.
      const low = Math.max(start, m.index - 45);
      while (from > low && IPV6_CHAR.test(text[from - 1] ?? '')) from -= 1;
      let to = m.index + m[0].length;
      const high = Math.min(end, to + 45);
      while (to < high && IPV6_CHAR.test(text[to] ?? '')) to += 1;
      while (to > from && text[to - 1] === '.') to -= 1;
      const bounded =
        !(from > start && /[\w:]/.test(text[from - 1] ?? '')) &&
        !(to < end && /\w/.test(text[to] ?? ''));
      const hit = bounded && to - from <= 45 && isHostIp(text.slice(from, to));
      return { from, to: Math.max(to, m.index + m[0].length), hit };
    },
  }),
];

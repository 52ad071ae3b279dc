import { expect } from 'chai';
import type { IncomingMessage } from 'node:http';
import { clientIp, forwardedClient, parseForwardedAddress } from '../../../src/http/client-ip.js';

/** The parts of a request clientIp reads. */
function request(xff: string | string[] | undefined, remoteAddress = '10.0.0.2'): IncomingMessage {
  return {
    headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
    socket: { remoteAddress },
  } as unknown as IncomingMessage;
}

describe('client IP', () => {
  describe('parseForwardedAddress', () => {
    const cases: [entry: string, address: string | undefined][] = [
      ['203.0.113.5', '203.0.113.5'],
      ['  203.0.113.5 ', '203.0.113.5'],
      ['203.0.113.5:51234', '203.0.113.5'],
      ['2001:db8::1', '2001:db8::1'],
      ['2001:DB8:0:0::1', '2001:db8::1'],
      ['[2001:db8::1]', '2001:db8::1'],
      ['[2001:db8::1]:443', '2001:db8::1'],
      ['::ffff:203.0.113.5', '203.0.113.5'],
      ['::FFFF:cb00:7105', '203.0.113.5'],
      ['[::ffff:203.0.113.5]:80', '203.0.113.5'],
      ['::1:80', '::1:80'],
      ['fe80::1%eth0', 'fe80::1%eth0'],
      ['unknown', undefined],
      ['', undefined],
      ['_hidden', undefined],
      ['203.0.113', undefined],
      ['203.0.113.500', undefined],
      ['010.0.0.1', undefined],
      ['203.0.113.5:', undefined],
      ['203.0.113.5:99999x', undefined],
      ['203.0.113.5 203.0.113.6', undefined],
      ['[203.0.113.5]:80', undefined],
      ['[2001:db8::1', undefined],
      ['2001:db8::1]:80', undefined],
      ['for=203.0.113.5', undefined],
      ['"203.0.113.5"', undefined],
    ];
    for (const [entry, address] of cases) {
      it(`reads ${JSON.stringify(entry)} as ${String(address)}`, () => {
        expect(parseForwardedAddress(entry)).to.equal(address);
      });
    }
  });

  describe('forwardedClient', () => {
    const cases: [
      header: string | string[] | undefined,
      hops: number,
      client: string | undefined,
    ][] = [
      ['203.0.113.5', 1, '203.0.113.5'],
      ['6.6.6.6, 203.0.113.5', 1, '203.0.113.5'],
      ['6.6.6.6,203.0.113.5:4711', 1, '203.0.113.5'],
      ['6.6.6.6, 203.0.113.5, 10.0.0.7', 2, '203.0.113.5'],
      [['6.6.6.6', '203.0.113.5'], 1, '203.0.113.5'],
      [['6.6.6.6, 203.0.113.5', '10.0.0.7'], 2, '203.0.113.5'],
      // The entry the proxy wrote is malformed: never fall back to the client's own entry.
      ['6.6.6.6, unknown', 1, undefined],
      ['6.6.6.6, ', 1, undefined],
      ['6.6.6.6,', 1, undefined],
      ['6.6.6.6, garbage', 1, undefined],
      ['6.6.6.6, unknown, 10.0.0.7', 2, undefined],
      // Fewer entries than trusted proxies: the request did not pass them all.
      ['203.0.113.5', 2, undefined],
      ['', 1, undefined],
      [undefined, 1, undefined],
    ];
    for (const [header, hops, client] of cases) {
      it(`takes ${String(client)} from ${JSON.stringify(header)} with ${hops} hop(s)`, () => {
        expect(forwardedClient(header, hops)).to.equal(client);
      });
    }
  });

  describe('clientIp', () => {
    const trusted = { trustProxy: true, trustedProxyHops: 1 };

    it('ignores X-Forwarded-For unless the proxy is trusted', () => {
      const req = request('203.0.113.5', '198.51.100.1');
      expect(clientIp(req, { trustProxy: false, trustedProxyHops: 1 })).to.equal('198.51.100.1');
      expect(clientIp(req, trusted)).to.equal('203.0.113.5');
    });

    it('uses the socket address when the trusted entry is malformed, not an earlier entry', () => {
      expect(clientIp(request('198.51.100.66, unknown', '10.0.0.2'), trusted)).to.equal('10.0.0.2');
    });

    it('uses the socket address when the header has fewer entries than trusted hops', () => {
      const twoHops = { trustProxy: true, trustedProxyHops: 2 };
      expect(clientIp(request('198.51.100.66', '10.0.0.2'), twoHops)).to.equal('10.0.0.2');
      expect(clientIp(request(undefined, '10.0.0.2'), twoHops)).to.equal('10.0.0.2');
    });

    it('gives an IPv4-mapped socket address as IPv4', () => {
      expect(clientIp(request(undefined, '::ffff:127.0.0.1'), trusted)).to.equal('127.0.0.1');
    });
  });
});

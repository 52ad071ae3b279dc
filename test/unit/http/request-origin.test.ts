import { expect } from 'chai';
import type { IncomingMessage } from 'node:http';
import { isSameOrigin, requestOrigin } from '../../../src/http/request-origin.js';

/** The parts of a request requestOrigin reads. */
function request(headers: Record<string, string | string[]>, encrypted = false): IncomingMessage {
  return { headers, socket: encrypted ? { encrypted: true } : {} } as unknown as IncomingMessage;
}
const direct = { trustProxy: false };
const proxied = { trustProxy: true };

describe('request origin', () => {
  it('is the scheme of the socket and the Host header, lower case, default port dropped', () => {
    expect(requestOrigin(request({ host: '127.0.0.1:8112' }), direct)).to.equal(
      'http://127.0.0.1:8112',
    );
    expect(requestOrigin(request({ host: 'UI.Example:443' }, true), direct)).to.equal(
      'https://ui.example',
    );
    expect(requestOrigin(request({ host: '[::1]:8112' }), direct)).to.equal('http://[::1]:8112');
  });

  it('is undefined without a usable Host', () => {
    for (const host of ['', 'a b', 'evil.example/x', 'user@host', 'host:port']) {
      expect(requestOrigin(request({ host }), direct), host).to.equal(undefined);
    }
    expect(requestOrigin(request({}), direct)).to.equal(undefined);
  });

  it('reads the first X-Forwarded-Proto and X-Forwarded-Host only behind a trusted proxy', () => {
    const req = request({
      host: '10.0.0.7:8112',
      'x-forwarded-proto': 'https, http',
      'x-forwarded-host': 'ui.example, 10.0.0.7:8112',
    });
    expect(requestOrigin(req, direct)).to.equal('http://10.0.0.7:8112');
    expect(requestOrigin(req, proxied)).to.equal('https://ui.example');
    expect(requestOrigin(request({ host: '10.0.0.7:8112' }), proxied)).to.equal(
      'http://10.0.0.7:8112',
    );
  });

  it('matches an Origin equal to it, spelled any way a URL allows, and nothing else', () => {
    const req = request({ host: '127.0.0.1:8112' });
    expect(isSameOrigin('http://127.0.0.1:8112', req, direct)).to.equal(true);
    expect(isSameOrigin('HTTP://127.0.0.1:8112/', req, direct)).to.equal(true);
    for (const origin of [
      'http://localhost:8112',
      'https://127.0.0.1:8112',
      'http://127.0.0.1:8113',
      'http://127.0.0.1',
      'null',
      '',
    ]) {
      expect(isSameOrigin(origin, req, direct), origin).to.equal(false);
    }
    expect(isSameOrigin('http://anything', request({}), direct)).to.equal(false);
  });
});

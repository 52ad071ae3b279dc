import { expect } from 'chai';
import { safeDecode } from '../../../src/http/safe-decode.js';
import { requiresKey } from '../../../src/http/middleware/auth.js';

describe('safeDecode', () => {
  it('decodes percent-encoding and answers undefined for a malformed sequence', () => {
    expect(safeDecode('run%2D1')).to.equal('run-1');
    expect(safeDecode('caf%C3%A9')).to.equal('café');
    expect(safeDecode('%')).to.equal(undefined);
    expect(safeDecode('%E0%A4%A')).to.equal(undefined);
  });

  it('lets the auth path check stop at the last decodable form', () => {
    // %2561pi decodes once to %61pi and again to api; a stray % stops decoding without throwing.
    expect(requiresKey('GET', '/%2561pi/runs')).to.equal(true);
    expect(requiresKey('GET', '/api/runs/%')).to.equal(true);
    expect(requiresKey('GET', '/assets/%')).to.equal(false);
  });
});

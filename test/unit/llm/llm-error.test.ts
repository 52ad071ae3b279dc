import { expect } from 'chai';
import { classifyHttpError, parseRetryAfter } from '../../../src/llm/llm-error.js';
import { scrubSecrets } from '../../../src/llm/scrub.js';

describe('classifyHttpError', () => {
  const kind = (status: number, body = '', retryAfter?: string) =>
    classifyHttpError('openai', status, body, retryAfter).kind;

  it('classifies by status and the provider message', () => {
    expect(kind(429)).to.equal('rate_limited');
    expect(kind(401)).to.equal('auth_error');
    expect(kind(403)).to.equal('auth_error');
    expect(kind(404)).to.equal('not_found');
    expect(kind(400, '{"error":{"message":"bad temperature"}}')).to.equal('invalid_request');
    expect(
      kind(400, '{"error":{"message":"This model\'s maximum context length is 8192 tokens"}}'),
    ).to.equal('context_length');
    expect(
      kind(400, '{"type":"error","error":{"message":"prompt is too long: 300000 tokens"}}'),
    ).to.equal('context_length');
    expect(kind(500)).to.equal('transient');
    expect(kind(503)).to.equal('transient');
    expect(kind(529)).to.equal('transient');
    expect(kind(408)).to.equal('transient');
  });

  it("keeps the provider's own message and the Retry-After in milliseconds", () => {
    const error = classifyHttpError('openai', 429, '{"error":{"message":"slow down"}}', '7');
    expect(error.message).to.equal('openai: HTTP 429: slow down');
    expect(error.retryAfterMs).to.equal(7000);
    expect(error.httpStatus).to.equal(429);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('1.5')).to.equal(1500);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4000)).to.equal(6000);
    expect(parseRetryAfter('soon')).to.equal(undefined);
    expect(parseRetryAfter(undefined)).to.equal(undefined);
  });

  it('scrubs the key and bearer tokens from the message', () => {
    const key = 'weird-key-shape-0123456789';
    const error = classifyHttpError(
      'openai',
      401,
      `{"error":{"message":"Incorrect API key provided: ${key}. Header was Bearer sk-abcdefghijklmnop1234"}}`,
      undefined,
      [key],
    );
    expect(error.message).to.not.include(key);
    expect(error.message).to.not.include('sk-abcdefghijklmnop1234');
    expect(error.message).to.include('[REDACTED]');
  });
});

describe('scrubSecrets', () => {
  it('removes key shapes, key=value pairs and known values', () => {
    const out = scrubSecrets(
      'url https://x/y?key=AIzaSyA1234567890abcdefghijk&alt=sse api-key: 0123456789abcdef sk-ant-api03-abcdefghijklmn ghp_abcdefghijklmnopqrstuvwxyz12 mine:hunter2hunter2',
      ['hunter2hunter2'],
    );
    expect(out).to.equal(
      'url https://x/y?key=[REDACTED]&alt=sse api-key: [REDACTED] [REDACTED] [REDACTED] mine:[REDACTED]',
    );
  });
});

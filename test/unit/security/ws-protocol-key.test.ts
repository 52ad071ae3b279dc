import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { createLogger } from '../../../src/log.js';
import {
  offeredProtocols,
  selectProtocol,
  WS_KEY_PROTOCOL_PREFIX,
  WS_PROTOCOL,
} from '../../../src/security/index.js';

describe('security/ws-protocol-key', () => {
  it('splits a Sec-WebSocket-Protocol header into the offered protocols', () => {
    expect(offeredProtocols(undefined)).to.deep.equal([]);
    expect(offeredProtocols(' agentic.v1 ,agentic.bearer.a2V5,, ')).to.deep.equal([
      'agentic.v1',
      'agentic.bearer.a2V5',
    ]);
  });

  it('answers with the marker only, never a credential', () => {
    expect(selectProtocol(new Set([`${WS_KEY_PROTOCOL_PREFIX}a2V5`, WS_PROTOCOL]))).to.equal(
      WS_PROTOCOL,
    );
    expect(selectProtocol(new Set([`${WS_KEY_PROTOCOL_PREFIX}a2V5`]))).to.equal(false);
    expect(selectProtocol(new Set(['chat']))).to.equal(false);
  });

  it('redacts the header in log records', async () => {
    const sink = new PassThrough();
    const lines: string[] = [];
    sink.on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
    const logger = createLogger({ destination: sink });
    const secret = `${WS_KEY_PROTOCOL_PREFIX}c2VjcmV0LWtleQ`;
    logger.info({ req: { headers: { 'sec-websocket-protocol': secret } } }, 'upgrade');
    logger.info({ headers: { 'sec-websocket-protocol': secret } }, 'upgrade');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.join('')).not.to.include('c2VjcmV0LWtleQ');
    expect(lines.join('')).to.include('[Redacted]');
  });
});

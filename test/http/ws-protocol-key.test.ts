import { expect } from 'chai';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { startTestService, type TestService } from './harness.js';

const KEY = 'browser-key-0123456789abcdef';

/** The subprotocols a browser offers with the key (docs/service.md, "The key from a browser"). */
function keyProtocols(key: string): string[] {
  return ['agentic.v1', `agentic.bearer.${Buffer.from(key, 'utf8').toString('base64url')}`];
}

describe('WS /ws/execution/{run_id}: the API key in Sec-WebSocket-Protocol', () => {
  let svc: TestService;
  beforeEach(async () => {
    svc = await startTestService({ env: { AGENTIC_API_KEY: KEY } });
  });
  afterEach(async () => {
    await svc.dispose();
  });

  it('streams a run to a client that offers the key as a subprotocol, answering agentic.v1 only', async () => {
    const url = `${svc.url.replace('http', 'ws')}/ws/execution/proto-run`;
    const ws = new WebSocket(url, keyProtocols(KEY));
    ws.on('error', () => undefined);
    const upgraded = once(ws, 'upgrade') as Promise<[IncomingMessage]>;
    await once(ws, 'open');
    const [response] = await upgraded;
    // The chosen protocol is the marker, never the credential the client offered.
    expect(response.headers['sec-websocket-protocol']).to.equal('agentic.v1');
    expect(ws.protocol).to.equal('agentic.v1');
    const first = once(ws, 'message') as Promise<[Buffer]>;
    const started = await fetch(`${svc.url}/api/run`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        workflow: 'test_deterministic',
        input_data: { text: 'x' },
        run_id: 'proto-run',
      }),
    });
    expect(started.status).to.equal(200);
    const [frame] = await first;
    expect(JSON.parse(frame.toString('utf8'))).to.include({
      type: 'workflow_start',
      run_id: 'proto-run',
    });
    await svc.finished('proto-run');
    ws.close();
    await once(ws, 'close');
  });

  it('closes 1008 for a wrong key in the subprotocol, and for the marker alone', async () => {
    const url = `${svc.url.replace('http', 'ws')}/ws/execution/some-run`;
    for (const protocols of [keyProtocols('not-the-key'), ['agentic.v1']]) {
      const ws = new WebSocket(url, protocols);
      ws.on('error', () => undefined);
      const [code] = (await once(ws, 'close')) as [number, Buffer];
      expect(code, protocols.join(',')).to.equal(1008);
    }
  });

  it('does not take the key from a subprotocol on plain HTTP requests', async () => {
    const res = await fetch(`${svc.url}/api/workflows`, {
      headers: { 'Sec-WebSocket-Protocol': keyProtocols(KEY).join(', ') },
    });
    expect(res.status).to.equal(401);
  });
});

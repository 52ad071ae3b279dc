import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { replayFromRecord } from '../../src/events/replay-from-record.js';
import type { WorkflowEvent } from '../../src/generated/events.js';
import { DEFAULT_WS_MAX_PAYLOAD, WS_CLOSE } from '../../src/http/ws-hub.js';
import { sampleRecord } from '../unit/events/hub-fixtures.js';
import {
  connectWs,
  range,
  seqs,
  startTestServer,
  type TestServer,
  type WsClient,
} from './events-fixtures.js';

/** Resolves once the client has the run's `workflow_end`. */
const untilEnd = (client: WsClient): Promise<WorkflowEvent[]> =>
  client.events.until((e) => e.at(-1)?.type === 'workflow_end', 'workflow_end');

/** Leaves, as a client does: a close frame with 1000, echoed by the server. */
async function leave(client: WsClient): Promise<{ code: number; reason: string }> {
  client.ws.close(1000, 'bye');
  return client.closed;
}

describe('WS /ws/execution/{run_id}', () => {
  let t: TestServer;

  afterEach(async () => {
    await t.close();
  });

  const runUrl = (runId: string, query = ''): string => `${t.wsUrl}/ws/execution/${runId}${query}`;

  it('streams a run live, one wire event per frame, and stays open after workflow_end until the client leaves', async () => {
    t = await startTestServer({ ws: { pingIntervalMs: 20 } });
    t.runtime.active.add('run1');
    const client = connectWs(runUrl('run1'));
    await t.feeds.until((ids) => ids.includes('run1'), 'the subscription');
    const emitted = t.runtime.runToEnd('run1', 3);
    expect(await untilEnd(client)).to.deep.equal(JSON.parse(JSON.stringify(emitted)));
    // Still open rounds of pings later; the feed let go of the run.
    await client.pings.until((p) => p.length >= 2, 'two pings after the end');
    expect(client.ws.readyState).to.equal(client.ws.OPEN);
    expect(t.hub.stats().listeners).to.equal(0);
    expect(t.wsHub.clientCount).to.equal(1);
    expect(await leave(client)).to.deep.equal({ code: 1000, reason: 'bye' });
    await t.disconnects.until((counts) => counts.at(-1) === 0, 'the server-side close');
  });

  it('replays to a joiner during the run, then streams the rest: seq 0..n exactly once', async () => {
    t = await startTestServer();
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    t.runtime.step('run1', 'a');
    const client = connectWs(runUrl('run1'));
    await client.events.until((e) => e.length === 3, 'the replay');
    t.runtime.step('run1', 'b');
    t.runtime.emit('run1', { type: 'workflow_end', status: 'success' });
    expect(seqs(await untilEnd(client))).to.deep.equal(range(0, 5));
    expect((await leave(client)).code).to.equal(1000);
  });

  it('replays a finished run and stays open', async () => {
    t = await startTestServer({ ws: { pingIntervalMs: 20 } });
    const emitted = t.runtime.runToEnd('run1', 2);
    const client = connectWs(runUrl('run1'));
    expect(await untilEnd(client)).to.deep.equal(JSON.parse(JSON.stringify(emitted)));
    await client.pings.until((p) => p.length >= 1, 'a ping after the replay');
    expect(client.events.ended).to.equal(false);
    expect((await leave(client)).code).to.equal(1000);
  });

  it('pins nothing of a finished run while its socket stays open, once the hub drops the buffer', async () => {
    t = await startTestServer({ finishedBuffers: 1 });
    // Only weak references to the events the hub buffers (the test must not hold them).
    const held = t.runtime.runToEnd('run1', 2).map((event) => new WeakRef(event));
    const client = connectWs(runUrl('run1'));
    await untilEnd(client);
    t.runtime.runToEnd('newer', 0);
    expect(t.hub.knows('run1')).to.equal(false);
    expect(client.ws.readyState).to.equal(client.ws.OPEN);
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // A WeakRef's target lives at least until the current job ends.
    await new Promise<void>((resolve) => setImmediate(resolve));
    gc();
    const reachable = held.map((ref) => ref.deref()?.type).filter((type) => type !== undefined);
    expect(reachable, 'events still reachable').to.deep.equal([]);
    expect((await leave(client)).code).to.equal(1000);
  });

  it('keeps no upgrade request alive while its socket streams (what a start burst scavenges)', async () => {
    t = await startTestServer();
    // Only weak references to the upgrade requests (this listener keeps nothing).
    const requests: WeakRef<object>[] = [];
    t.server.prependListener('upgrade', (req: object) => requests.push(new WeakRef(req)));
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    const clients = [connectWs(runUrl('run1')), connectWs(runUrl('run1'))];
    for (const client of clients) await client.events.until((e) => e.length === 1, 'the replay');
    t.runtime.step('run1', 'a');
    for (const client of clients) await client.events.until((e) => e.length === 3, 'live events');
    expect(requests).to.have.length(2);
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // A WeakRef's target lives at least until the current job ends.
    await new Promise<void>((resolve) => setImmediate(resolve));
    gc();
    const reachable = requests.filter((ref) => ref.deref() !== undefined).length;
    expect(reachable, 'upgrade requests still reachable').to.equal(0);
    for (const client of clients) expect(client.ws.readyState).to.equal(client.ws.OPEN);
    // The sockets still stream and close normally.
    t.runtime.emit('run1', { type: 'workflow_end', status: 'success' });
    for (const client of clients) {
      expect(seqs(await untilEnd(client))).to.deep.equal(range(0, 3));
      expect((await leave(client)).code).to.equal(1000);
    }
    await t.disconnects.until((counts) => counts.at(-1) === 0, 'the server-side closes');
  });

  it('gives many clients joining while events flow every event once, in order', async () => {
    t = await startTestServer();
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    const clients = [];
    for (let i = 0; i < 60; i += 1) {
      t.runtime.step('run1', `s${i}`);
      if (i % 4 === 0) clients.push(connectWs(runUrl('run1')));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await Promise.all(clients.map((c) => c.opened));
    t.runtime.emit('run1', { type: 'workflow_end', status: 'success' });
    for (const client of clients) {
      expect(seqs(await untilEnd(client))).to.deep.equal(range(0, 121));
      expect((await leave(client)).code).to.equal(1000);
    }
  });

  it('rebuilds the sequence from the run file when the buffer was evicted', async () => {
    t = await startTestServer({ finishedBuffers: 1 });
    const record = sampleRecord('old1');
    const filename = await t.writeRunFile(record);
    t.runtime.runToEnd('newer', 1);
    const client = connectWs(runUrl('old1'));
    expect(await untilEnd(client)).to.deep.equal(
      JSON.parse(JSON.stringify(replayFromRecord(record, filename))),
    );
    expect((await leave(client)).code).to.equal(1000);
  });

  describe('a run the service does not know yet', () => {
    it('waits for it, then streams it from its first event', async () => {
      t = await startTestServer();
      const client = connectWs(runUrl('later'));
      await t.feeds.until((ids) => ids.includes('later'), 'the waiting subscription');
      expect(t.wsHub.pendingCount).to.equal(1);
      const emitted = t.runtime.runToEnd('later', 2);
      expect(await untilEnd(client)).to.deep.equal(JSON.parse(JSON.stringify(emitted)));
      expect(t.wsHub.pendingCount).to.equal(0);
      expect((await leave(client)).code).to.equal(1000);
    });

    it('bounds the sockets one client may hold waiting, and frees a slot when one leaves or its run starts', async () => {
      t = await startTestServer({ ws: { maxPendingPerClient: 2 } });
      t.runtime.runToEnd('done', 0);
      const a = connectWs(runUrl('later-a'));
      const b = connectWs(runUrl('later-b'));
      await t.feeds.until((ids) => ids.includes('later-a') && ids.includes('later-b'));
      const known = connectWs(runUrl('done'));
      await untilEnd(known);
      const over = connectWs(runUrl('later-c'));
      expect(await over.closed).to.deep.equal({
        code: WS_CLOSE.TRY_AGAIN_LATER,
        reason: 'too many sockets waiting for runs not started (max 2)',
      });
      expect(t.wsHub.pendingCount).to.equal(2);

      t.runtime.emit('later-a', { type: 'workflow_start', workflow_name: 'wf' });
      await a.events.until((e) => e.length === 1, 'workflow_start');
      expect(t.wsHub.pendingCount).to.equal(1);
      const d = connectWs(runUrl('later-d'));
      await t.feeds.until((ids) => ids.includes('later-d'));
      expect(t.wsHub.pendingCount).to.equal(2);

      b.ws.close();
      d.ws.close();
      await t.disconnects.until((closes) => closes.length === 3, 'three closes');
      expect(t.wsHub.pendingCount).to.equal(0);
      expect(t.hub.stats().pending).to.equal(0);
      const e = connectWs(runUrl('later-e'));
      await t.feeds.until((ids) => ids.includes('later-e'));
      expect(t.wsHub.pendingCount).to.equal(1);
      for (const client of [a, known, e]) expect((await leave(client)).code).to.equal(1000);
    });

    it('closes 4404 for a run id no run can have', async () => {
      t = await startTestServer();
      const client = connectWs(runUrl('bad%20id'));
      await client.opened;
      expect(await client.closed).to.deep.equal({
        code: WS_CLOSE.RUN_NOT_FOUND,
        reason: 'invalid run id',
      });
    });
  });

  it('ignores text sent by the client', async () => {
    t = await startTestServer();
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    const client = connectWs(runUrl('run1'));
    await client.events.until((e) => e.length === 1);
    client.ws.send('ping');
    client.ws.send(JSON.stringify({ type: 'workflow_end', run_id: 'run1', seq: 99 }));
    t.runtime.step('run1', 'a');
    t.runtime.emit('run1', { type: 'workflow_end', status: 'success' });
    expect(seqs(await untilEnd(client))).to.deep.equal(range(0, 3));
    expect((await leave(client)).code).to.equal(1000);
  });

  it('closes 1009 for a client message over the payload limit', async () => {
    t = await startTestServer();
    const client = connectWs(runUrl('later'));
    await t.feeds.until((ids) => ids.includes('later'));
    // The server's feed can exist before the client has seen the handshake's answer.
    await client.opened;
    client.ws.send('x'.repeat(DEFAULT_WS_MAX_PAYLOAD + 1));
    expect((await client.closed).code).to.equal(WS_CLOSE.MESSAGE_TOO_BIG);
  });

  describe('heartbeat', () => {
    it('keeps a client that answers pings', async () => {
      t = await startTestServer({ ws: { pingIntervalMs: 10 } });
      const client = connectWs(runUrl('later'));
      await client.pings.until((p) => p.length >= 3, 'three pings');
      expect(client.ws.readyState).to.equal(client.ws.OPEN);
      expect((await leave(client)).code).to.equal(1000);
    });

    it('terminates a client that does not answer a ping', async () => {
      t = await startTestServer({ ws: { pingIntervalMs: 10 } });
      t.runtime.runToEnd('run1', 0);
      // A raw TCP client: completes the handshake, reads, never answers anything.
      const socket = connect(Number(new URL(t.wsUrl).port), '127.0.0.1');
      let received = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
      const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.write(
        [
          'GET /ws/execution/run1 HTTP/1.1',
          'Host: 127.0.0.1',
          'Upgrade: websocket',
          'Connection: Upgrade',
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
          'Sec-WebSocket-Version: 13',
          '',
          '',
        ].join('\r\n'),
      );
      await gone;
      expect(received.toString('latin1')).to.match(/^HTTP\/1\.1 101 /);
      // An empty unmasked ping frame: FIN + opcode 0x9, length 0 (no text byte is >= 0x80).
      expect(received.includes(Buffer.from([0x89, 0x00]))).to.equal(true);
      await t.disconnects.until((counts) => counts.at(-1) === 0, 'the server-side close');
    });
  });

  describe('connection sequence (spec: close 1008 after accepting)', () => {
    it('closes 1008 for an Origin that is not allowed, and serves an allowed one', async () => {
      t = await startTestServer({ env: { AGENTIC_CORS_ORIGINS: 'http://good.example' } });
      t.runtime.runToEnd('run1', 0);
      const bad = connectWs(runUrl('run1'), { Origin: 'http://evil.example' });
      await bad.opened;
      expect(await bad.closed).to.deep.equal({ code: 1008, reason: 'origin not allowed' });
      expect(bad.events.items).to.deep.equal([]);
      const good = connectWs(runUrl('run1'), { Origin: 'http://good.example' });
      expect(await untilEnd(good)).to.have.length(2);
      expect((await leave(good)).code).to.equal(1000);
    });

    it('serves its own origin whatever AGENTIC_CORS_ORIGINS says: the scheme, host and port the request was addressed to', async () => {
      t = await startTestServer({ env: { AGENTIC_CORS_ORIGINS: 'http://good.example' } });
      t.runtime.runToEnd('run1', 0);
      const port = new URL(t.wsUrl).port;
      expect(['5173', '8000', '8010']).to.not.include(port);
      // `ws` sends `Host: 127.0.0.1:<port>`, as a browser on that page would.
      const own = connectWs(runUrl('run1'), { Origin: `http://127.0.0.1:${port}` });
      expect(await untilEnd(own)).to.have.length(2);
      expect((await leave(own)).code).to.equal(1000);
      for (const foreign of [
        `http://localhost:${port}`,
        `https://127.0.0.1:${port}`,
        `http://127.0.0.1:${Number(port) + 1}`,
        'http://127.0.0.1',
        'null',
      ]) {
        const client = connectWs(runUrl('run1'), { Origin: foreign });
        await client.opened;
        expect(await client.closed, foreign).to.deep.equal({
          code: 1008,
          reason: 'origin not allowed',
        });
        expect(client.events.items).to.deep.equal([]);
      }
    });

    it('takes the origin from X-Forwarded-Proto and X-Forwarded-Host only behind a trusted proxy', async () => {
      const behindProxy = {
        Origin: 'https://ui.example',
        'X-Forwarded-Proto': 'https',
        'X-Forwarded-Host': 'ui.example',
      };
      t = await startTestServer();
      t.runtime.runToEnd('run1', 0);
      const direct = connectWs(runUrl('run1'), behindProxy);
      await direct.opened;
      expect(await direct.closed).to.deep.equal({ code: 1008, reason: 'origin not allowed' });
      await t.close();

      t = await startTestServer({ env: { AGENTIC_TRUST_PROXY: '1' } });
      t.runtime.runToEnd('run1', 0);
      const proxied = connectWs(runUrl('run1'), behindProxy);
      expect(await untilEnd(proxied)).to.have.length(2);
      expect((await leave(proxied)).code).to.equal(1000);
      // Behind the proxy the service's direct address is not the page's origin.
      const port = new URL(t.wsUrl).port;
      const bypass = connectWs(runUrl('run1'), {
        ...behindProxy,
        Origin: `http://127.0.0.1:${port}`,
      });
      await bypass.opened;
      expect(await bypass.closed).to.deep.equal({ code: 1008, reason: 'origin not allowed' });
    });

    for (const param of ['api_key', 'token', 'key', 'access_token']) {
      it(`closes 1008 for a key in the query string (${param}), even in open mode`, async () => {
        t = await startTestServer();
        t.runtime.runToEnd('run1', 0);
        const client = connectWs(runUrl('run1', `?${param}=secret`));
        await client.opened;
        expect(await client.closed).to.deep.equal({
          code: 1008,
          reason: 'API key in query string not allowed',
        });
        expect(client.events.items).to.deep.equal([]);
      });
    }

    it('closes 1008 for a missing or wrong key and serves the right one by either header', async () => {
      t = await startTestServer({ env: { AGENTIC_API_KEY: 'sekret-key-123' } });
      t.runtime.runToEnd('run1', 0);
      for (const headers of [{}, { 'X-API-Key': 'wrong' }, { Authorization: 'Bearer wrong' }]) {
        const client = connectWs(runUrl('run1'), headers);
        await client.opened;
        const closed = await client.closed;
        expect(closed.code, JSON.stringify(headers)).to.equal(1008);
        expect(client.events.items).to.deep.equal([]);
      }
      for (const headers of [
        { 'X-API-Key': 'sekret-key-123' },
        { Authorization: 'Bearer sekret-key-123' },
      ]) {
        const client = connectWs(runUrl('run1'), headers);
        expect(seqs(await untilEnd(client))).to.deep.equal([0, 1]);
        expect((await leave(client)).code).to.equal(1000);
      }
    });
  });

  it('refuses upgrades on other paths with HTTP 404', async () => {
    t = await startTestServer();
    for (const path of ['/ws/other/run1', '/ws/execution/run1/extra', '/api/health']) {
      const client = connectWs(`${t.wsUrl}${path}`);
      let error: unknown;
      await client.opened.catch((e: unknown) => (error = e));
      expect(String(error), path).to.equal('Error: HTTP 404');
    }
  });

  it('terminates a stalled client while another client receives everything', async () => {
    t = await startTestServer({ ws: { maxBufferedBytes: 256 * 1024 } });
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    const stalled = connectWs(runUrl('run1'));
    const good = connectWs(runUrl('run1'));
    await stalled.events.until((e) => e.length === 1);
    await good.events.until((e) => e.length === 1);
    const socket = (stalled.ws as unknown as { _socket: { pause(): void; resume(): void } })
      ._socket;
    socket.pause();
    const big = 'x'.repeat(128 * 1024);
    let sent = 0;
    for (let seq = 1; t.hub.stats().listeners === 2 && seq < 2000; seq += 2) {
      t.runtime.step('run1', `s${seq}`, { big });
      sent = seq + 1;
      await good.events.until((e) => e.length >= seq + 2, `event ${seq + 1}`);
    }
    expect(t.hub.stats().listeners).to.equal(1);
    t.runtime.emit('run1', { type: 'workflow_end', status: 'success' });
    expect(seqs(await untilEnd(good))).to.deep.equal(range(0, sent + 1));
    socket.resume();
    expect((await stalled.closed).code).to.equal(1006);
    expect(stalled.events.items.length).to.be.lessThan(sent + 2);
    expect((await leave(good)).code).to.equal(1000);
  });

  it('close() closes every client with 1001: live, finished and waiting', async () => {
    t = await startTestServer();
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    t.runtime.runToEnd('done', 0);
    const live = connectWs(runUrl('run1'));
    const finished = connectWs(runUrl('done'));
    const waiting = connectWs(runUrl('later'));
    await live.events.until((e) => e.length === 1);
    await untilEnd(finished);
    await t.feeds.until((ids) => ids.includes('later'));
    await t.wsHub.close();
    for (const client of [live, finished, waiting]) {
      expect((await client.closed).code).to.equal(WS_CLOSE.GOING_AWAY);
    }
    expect(t.wsHub.clientCount).to.equal(0);
  });
});

import { expect } from 'chai';
import { replayFromRecord } from '../../src/events/replay-from-record.js';
import { WS_CLOSE } from '../../src/http/ws-hub.js';
import { sampleRecord } from '../unit/events/hub-fixtures.js';
import { connectWs, range, seqs, startTestServer, type TestServer } from './events-fixtures.js';

describe('WS /ws/execution/{run_id}', () => {
  let t: TestServer;

  afterEach(async () => {
    await t.close();
  });

  const runUrl = (runId: string, query = ''): string => `${t.wsUrl}/ws/execution/${runId}${query}`;

  it('streams a run live, one wire event per frame, and closes 1000 after workflow_end', async () => {
    t = await startTestServer();
    t.runtime.active.add('run1');
    const client = connectWs(runUrl('run1'));
    await t.feeds.until((ids) => ids.includes('run1'), 'the subscription');
    const emitted = t.runtime.runToEnd('run1', 3);
    expect(await client.closed).to.deep.equal({ code: WS_CLOSE.NORMAL, reason: 'run finished' });
    expect(client.events.items).to.deep.equal(JSON.parse(JSON.stringify(emitted)));
  });

  it('replays to a joiner during the run, then streams the rest: seq 0..n exactly once', async () => {
    t = await startTestServer();
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    t.runtime.step('run1', 'a');
    const client = connectWs(runUrl('run1'));
    await client.events.until((e) => e.length === 3, 'the replay');
    t.runtime.step('run1', 'b');
    t.runtime.emit('run1', { type: 'workflow_end', status: 'success' });
    expect((await client.closed).code).to.equal(WS_CLOSE.NORMAL);
    expect(seqs(client.events.items)).to.deep.equal(range(0, 5));
  });

  it('replays a finished run, then closes 1000', async () => {
    t = await startTestServer();
    const emitted = t.runtime.runToEnd('run1', 2);
    const client = connectWs(runUrl('run1'));
    expect((await client.closed).code).to.equal(WS_CLOSE.NORMAL);
    expect(client.events.items).to.deep.equal(JSON.parse(JSON.stringify(emitted)));
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
      expect((await client.closed).code).to.equal(WS_CLOSE.NORMAL);
      expect(seqs(client.events.items)).to.deep.equal(range(0, 121));
    }
  });

  it('rebuilds the sequence from the run file when the buffer was evicted', async () => {
    t = await startTestServer({ finishedBuffers: 1 });
    const record = sampleRecord('old1');
    const filename = await t.writeRunFile(record);
    t.runtime.runToEnd('newer', 1);
    const client = connectWs(runUrl('old1'));
    expect((await client.closed).code).to.equal(WS_CLOSE.NORMAL);
    expect(client.events.items).to.deep.equal(
      JSON.parse(JSON.stringify(replayFromRecord(record, filename))),
    );
  });

  it('accepts, then closes 4404 "run not found" for an unknown run', async () => {
    t = await startTestServer();
    const client = connectWs(runUrl('nope'));
    await client.opened;
    expect(await client.closed).to.deep.equal({ code: 4404, reason: 'run not found' });
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
    expect((await client.closed).code).to.equal(WS_CLOSE.NORMAL);
    expect(seqs(client.events.items)).to.deep.equal(range(0, 3));
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
      expect((await good.closed).code).to.equal(WS_CLOSE.NORMAL);
      expect(good.events.items).to.have.length(2);
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
        expect((await client.closed).code).to.equal(WS_CLOSE.NORMAL);
        expect(seqs(client.events.items)).to.deep.equal([0, 1]);
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
    expect((await good.closed).code).to.equal(WS_CLOSE.NORMAL);
    expect(seqs(good.events.items)).to.deep.equal(range(0, sent + 1));
    socket.resume();
    expect((await stalled.closed).code).to.equal(1006);
    expect(stalled.events.items.length).to.be.lessThan(sent + 2);
  });

  it('close() closes connected clients with 1001', async () => {
    t = await startTestServer();
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    const client = connectWs(runUrl('run1'));
    await client.events.until((e) => e.length === 1);
    await t.wsHub.close();
    expect((await client.closed).code).to.equal(WS_CLOSE.GOING_AWAY);
    expect(t.wsHub.clientCount).to.equal(0);
  });
});

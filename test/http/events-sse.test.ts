import { expect } from 'chai';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { replayFromRecord } from '../../src/events/replay-from-record.js';
import type { WorkflowEvent } from '../../src/generated/events.js';
import { sampleRecord } from '../unit/events/hub-fixtures.js';
import { openSse, range, seqs, startTestServer, type TestServer } from './events-fixtures.js';

describe('GET /api/runs/{run_id}/stream (SSE)', () => {
  let t: TestServer;

  afterEach(async () => {
    await t.close();
  });

  const streamUrl = (runId: string): string => `${t.baseUrl}/api/runs/${runId}/stream`;

  it('streams a run live as data frames and closes after workflow_end', async () => {
    t = await startTestServer();
    t.runtime.active.add('run1');
    const client = await openSse(streamUrl('run1'));
    expect(client.status).to.equal(200);
    expect(client.headers.get('content-type')).to.equal('text/event-stream; charset=utf-8');
    expect(client.headers.get('cache-control')).to.equal('no-cache, no-transform');
    expect(client.headers.get('x-accel-buffering')).to.equal('no');
    const emitted = t.runtime.runToEnd('run1', 3);
    const frames = await client.frames.done();
    expect(frames).to.deep.equal(JSON.parse(JSON.stringify(emitted)));
    expect(frames.map((f) => f.type)).to.deep.equal([
      'workflow_start',
      'step_start',
      'step_end',
      'step_start',
      'step_end',
      'step_start',
      'step_end',
      'workflow_end',
    ]);
  });

  it('replays to a joiner during the run, then streams the rest: seq 0..n exactly once', async () => {
    t = await startTestServer();
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    t.runtime.step('run1', 'a');
    const client = await openSse(streamUrl('run1'));
    await client.frames.until((f) => f.length === 3, 'the replay');
    t.runtime.step('run1', 'b');
    t.runtime.emit('run1', { type: 'workflow_end', status: 'success' });
    await client.frames.done();
    expect(seqs(client.events())).to.deep.equal(range(0, 5));
  });

  it('replays a finished run and closes at once', async () => {
    t = await startTestServer();
    const emitted = t.runtime.runToEnd('run1', 2);
    const client = await openSse(streamUrl('run1'));
    expect(await client.frames.done()).to.deep.equal(JSON.parse(JSON.stringify(emitted)));
  });

  it('gives many clients joining while events flow every event once, in order', async () => {
    t = await startTestServer();
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    const clients = [];
    for (let i = 0; i < 60; i += 1) {
      t.runtime.step('run1', `s${i}`);
      if (i % 6 === 0) clients.push(await openSse(streamUrl('run1')));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    t.runtime.emit('run1', { type: 'workflow_end', status: 'success' });
    for (const client of clients) {
      await client.frames.done();
      expect(seqs(client.events())).to.deep.equal(range(0, 121));
    }
  });

  it('rebuilds the sequence from the run file when the buffer was evicted', async () => {
    t = await startTestServer({ finishedBuffers: 1 });
    const record = sampleRecord('old1');
    const filename = await t.writeRunFile(record);
    t.runtime.runToEnd('newer', 1);
    expect(t.hub.knows('old1')).to.equal(false);
    const client = await openSse(streamUrl('old1'));
    const frames = await client.frames.done();
    expect(frames).to.deep.equal(JSON.parse(JSON.stringify(replayFromRecord(record, filename))));
    expect(frames.map((f) => f.type)).to.deep.equal([
      'workflow_start',
      'step_start',
      'step_end',
      'step_end',
      'workflow_end',
    ]);
  });

  it('stays open after workflow_end until evaluation_complete when evaluation was requested', async () => {
    t = await startTestServer();
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    t.runtime.record(
      { ...sampleRecord('run1', { evaluation: { enabled: true } }), status: 'running' },
      'f.json',
    );
    const client = await openSse(streamUrl('run1'));
    t.runtime.emit('run1', { type: 'workflow_end', status: 'success' });
    await client.frames.until((f) => f.some((e) => e.type === 'workflow_end'), 'workflow_end');
    expect(client.frames.ended).to.equal(false);
    t.runtime.emit('run1', { type: 'evaluation_start', rubric_id: 'default' });
    t.runtime.emit('run1', { type: 'evaluation_complete', overall_score: 91 });
    await client.frames.done();
    expect(client.events().map((e) => e.type)).to.deep.equal([
      'workflow_start',
      'workflow_end',
      'evaluation_start',
      'evaluation_complete',
    ]);
  });

  it('sends keepalive frames while the run is quiet', async () => {
    t = await startTestServer({ stream: { keepaliveMs: 10 } });
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    const client = await openSse(streamUrl('run1'));
    await client.frames.until(
      (f) => f.filter((e) => e.type === 'keepalive').length >= 2,
      'keepalives',
    );
    t.runtime.emit('run1', { type: 'workflow_end', status: 'success' });
    await client.frames.done();
    expect(client.frames.items.filter((f) => f.type === 'keepalive').at(0)).to.deep.equal({
      type: 'keepalive',
    });
    expect(seqs(client.events())).to.deep.equal([0, 1]);
  });

  it('closes after the idle timeout without events (keepalives do not count)', async () => {
    t = await startTestServer({ stream: { keepaliveMs: 5, idleTimeoutMs: 60 } });
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    const client = await openSse(streamUrl('run1'));
    await client.frames.done();
    expect(seqs(client.events())).to.deep.equal([0]);
    expect(client.frames.items.some((f) => f.type === 'keepalive')).to.equal(true);
    expect(t.hub.stats().listeners).to.equal(0);
    expect(t.runtime.isActive('run1')).to.equal(true);
  });

  it('answers 404 {detail} for an unknown or malformed run id', async () => {
    t = await startTestServer();
    for (const id of ['nope', 'bad%20id', '..%2F..%2Fetc']) {
      const response = await fetch(streamUrl(id));
      expect(response.status, id).to.equal(404);
      expect(await response.json()).to.deep.equal({ detail: 'Run not found' });
    }
  });

  it('unsubscribes a client that disconnects', async () => {
    t = await startTestServer();
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    const serverClosed = new Promise<void>((resolve) => {
      t.requests.once('request', (_req: IncomingMessage, res: ServerResponse) =>
        res.once('close', resolve),
      );
    });
    const client = await openSse(streamUrl('run1'));
    await client.frames.until((f) => f.length === 1);
    expect(t.hub.stats().listeners).to.equal(1);
    client.abort();
    await serverClosed;
    expect(t.hub.stats().listeners).to.equal(0);
  });

  it('drops a client that stops reading while another client gets everything', async () => {
    t = await startTestServer({ stream: { maxBufferedBytes: 256 * 1024 } });
    t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
    const slowClosed = new Promise<void>((resolve) => {
      t.requests.once('request', (_req: IncomingMessage, res: ServerResponse) =>
        res.once('close', resolve),
      );
    });
    // The slow client: a raw request whose response body is never read.
    const slowRequest = await import('node:http').then(
      ({ get }) =>
        new Promise<IncomingMessage>((resolve) => {
          get(streamUrl('run1'), resolve);
        }),
    );
    const good = await openSse(streamUrl('run1'));
    const big = 'x'.repeat(128 * 1024);
    let sent = 0;
    for (let seq = 1; t.hub.stats().listeners === 2 && seq < 2000; seq += 2) {
      t.runtime.step('run1', `s${seq}`, { big });
      sent = seq + 1;
      await good.frames.until((f) => f.length >= seq + 2, `event ${seq + 1}`);
    }
    await slowClosed;
    expect(t.hub.stats().listeners).to.equal(1);
    t.runtime.emit('run1', { type: 'workflow_end', status: 'success' });
    const events: WorkflowEvent[] = (await good.frames.done()) as unknown as WorkflowEvent[];
    expect(seqs(events)).to.deep.equal(range(0, sent + 1));
    slowRequest.destroy();
  });
});

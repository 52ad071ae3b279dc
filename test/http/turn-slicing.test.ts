import { expect } from 'chai';
import Koa from 'koa';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { processTurnSlicer, type TurnSlicer } from '../../src/engine/turn-slicer.js';
import { sliceRequests } from '../../src/http/middleware/turn-slice.js';
import { connectWs, Inbox, startTestServer, type TestServer } from './events-fixtures.js';
import { startTestService, type TestService } from './harness.js';

/** A slicer whose slots open only when the test releases them (each slot asked is in `asked`). */
function gateSlicer(): { slicer: TurnSlicer; asked: Inbox<() => void> } {
  const asked = new Inbox<() => void>();
  return { slicer: { slot: () => new Promise<void>((resolve) => asked.push(resolve)) }, asked };
}

describe('turn slicing of requests and upgrades', () => {
  describe('sliceRequests (a real Koa server)', () => {
    let server: Server | undefined;
    afterEach(async () => {
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    });

    async function listen(slicer: TurnSlicer, handled: string[]): Promise<string> {
      const app = new Koa();
      app.use(sliceRequests(slicer));
      app.use((ctx) => {
        handled.push(ctx.path);
        ctx.body = { path: ctx.path };
      });
      const handle = app.callback();
      server = createServer((req, res) => void handle(req, res));
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }

    it('runs a request only once its slot opens, in the order the slots open', async () => {
      const { slicer, asked } = gateSlicer();
      const handled: string[] = [];
      const base = await listen(slicer, handled);
      const first = fetch(`${base}/first`);
      const second = fetch(`${base}/second`);
      const [openFirst, openSecond] = await asked.until((s) => s.length === 2, 'two slots asked');
      // Both requests arrived and wait: nothing behind the slicer has run.
      expect(handled).to.deep.equal([]);
      openSecond?.();
      expect(await (await second).json()).to.deep.equal({ path: '/second' });
      expect(handled).to.deep.equal(['/second']);
      openFirst?.();
      expect((await first).status).to.equal(200);
      expect(handled).to.deep.equal(['/second', '/first']);
    });

    it('goes on at once when the slicer gives the slot at once (a turn with budget left)', async () => {
      const handled: string[] = [];
      const base = await listen({ slot: () => undefined }, handled);
      expect((await fetch(`${base}/now`)).status).to.equal(200);
      expect(handled).to.deep.equal(['/now']);
    });
  });

  describe('the WebSocket hub', () => {
    let t: TestServer;
    afterEach(async () => {
      await t.close();
    });

    it('answers an upgrade (handshake, subscription, replay) only once its slot opens', async () => {
      const { slicer, asked } = gateSlicer();
      t = await startTestServer({ ws: { slicer } });
      t.runtime.emit('run1', { type: 'workflow_start', workflow_name: 'wf' });
      const client = connectWs(`${t.wsUrl}/ws/execution/run1`);
      const [open] = await asked.until((s) => s.length === 1, 'the upgrade asking for a slot');
      // Waiting for its slot: no handshake yet, no subscription.
      expect(client.ws.readyState).to.equal(client.ws.CONNECTING);
      expect(t.feeds.items).to.deep.equal([]);
      open?.();
      await client.opened;
      const replayed = await client.events.until((e) => e.length === 1, 'the replay');
      expect(replayed[0]?.type).to.equal('workflow_start');
      client.ws.close(1000);
      await client.closed;
    });
  });

  describe('the service', () => {
    let service: TestService;
    let restoreSlot: (() => void) | undefined;
    afterEach(async () => {
      restoreSlot?.();
      await service.dispose();
    });

    it("passes its requests and upgrades through the process's slicer, which run starts and ends use too", async () => {
      service = await startTestService();
      const slicer = processTurnSlicer();
      // Every slot asked is counted; the slicer itself still decides.
      let asked = 0;
      const slot = slicer.slot.bind(slicer);
      slicer.slot = () => {
        asked++;
        return slot();
      };
      restoreSlot = () => (slicer.slot = slot);
      expect((await fetch(`${service.url}/api/health`)).status).to.equal(200);
      expect(asked).to.equal(1);
      const client = connectWs(`${service.url.replace('http', 'ws')}/ws/execution/unknown-run`);
      await client.opened;
      expect(asked).to.equal(2);
      client.ws.close(1000);
      await client.closed;
      // A run: its request, its launch, its begin and its end.
      const response = await fetch(`${service.url}/api/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'test_deterministic', input_data: {} }),
      });
      expect(response.status).to.equal(200);
      const { run_id: runId } = (await response.json()) as { run_id: string };
      await service.finished(runId);
      expect(asked).to.equal(6);
    });
  });
});

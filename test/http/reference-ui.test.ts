/**
 * The Python service's React web UI, as a client: what it sends and how its WebSocket client
 * behaves (ARCHITECTURE §12). It reconnects on *any* close (its retry counter reset on each
 * open) and applies every frame it receives; it opens sockets for runs about to start and for
 * `/ws/execution/latest`; it sends form inputs as strings, no adapter, and
 * `execution_profile: {runtime: "subprocess"}`; it renders `{tier && …}`.
 */
import { expect } from 'chai';
import WebSocket from 'ws';
import { Inbox } from './events-fixtures.js';
import { call, startTestService, type TestService } from './harness.js';

interface UiFrame {
  type: string;
  seq: number;
  run_id: string;
}

/** The UI's live page: one logical subscription that reconnects whenever its socket closes. */
class UiLiveSocket {
  readonly frames = new Inbox<UiFrame>();
  readonly pings = new Inbox<number>();
  /** Close codes the server sent, in order. */
  readonly closes = new Inbox<number>();
  connections = 0;
  private ws: WebSocket | undefined;
  private leaving = false;

  /** `origin`: the page's origin, which a browser sends as `Origin` (none: a non-browser client). */
  constructor(
    private readonly url: string,
    private readonly origin?: string,
  ) {
    this.open();
  }

  private open(): void {
    const ws = new WebSocket(
      this.url,
      this.origin === undefined ? {} : { headers: { Origin: this.origin } },
    );
    this.ws = ws;
    ws.on('open', () => (this.connections += 1));
    ws.on('message', (data: Buffer) =>
      this.frames.push(JSON.parse(data.toString('utf8')) as UiFrame),
    );
    ws.on('ping', () => this.pings.push(this.pings.items.length + 1));
    ws.on('error', () => undefined);
    ws.on('close', (code: number) => {
      this.closes.push(code);
      // The reference client retries on every close; a short delay stands in for its backoff.
      if (!this.leaving) setTimeout(() => this.open(), 20);
    });
  }

  async leave(): Promise<void> {
    this.leaving = true;
    const ws = this.ws;
    if (ws === undefined || ws.readyState === ws.CLOSED) return;
    await new Promise<void>((resolve) => {
      ws.once('close', () => resolve());
      ws.close(1000, 'page left');
    });
  }
}

describe('the reference web UI against this service', () => {
  let svc: TestService;
  const sockets: UiLiveSocket[] = [];

  beforeEach(async () => {
    svc = await startTestService({ env: { AGENTIC_WS_PING_INTERVAL_SECONDS: '0.05' } });
  });
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((socket) => socket.leave()));
    await svc.dispose();
  });

  const live = (runId: string, origin?: string): UiLiveSocket => {
    const socket = new UiLiveSocket(
      `${svc.url.replace('http', 'ws')}/ws/execution/${runId}`,
      origin,
    );
    sockets.push(socket);
    return socket;
  };

  it('runs from the form, watches Live to the end and stays connected: no reconnect, no duplicate event', async () => {
    const started = await call(svc.url, 'POST', '/api/run', {
      workflow: 'conditional_branching',
      input_data: { text: 'a text long enough for the long branch', threshold: '10' },
      execution_profile: { runtime: 'subprocess' },
    });
    expect(started.status, started.text).to.equal(200);
    const runId = (started.body as { run_id: string }).run_id;
    // Until workflow_start the UI guesses the workflow from the id's text before the last '-'.
    expect(runId.slice(0, runId.lastIndexOf('-'))).to.equal('conditional_branching');

    const page = live(runId);
    const frames = await page.frames.until(
      (all) => all.some((frame) => frame.type === 'workflow_end'),
      'workflow_end',
    );
    // Rounds of pings after the end: a closing server would have made the UI reconnect by now.
    const pingsAtEnd = page.pings.items.length;
    await page.pings.until((p) => p.length >= pingsAtEnd + 3, 'three more pings');
    expect(page.connections).to.equal(1);
    const seqs = page.frames.items.map((frame) => frame.seq);
    expect(seqs).to.deep.equal(seqs.map((_, i) => i));
    expect(frames[0]?.type).to.equal('workflow_start');
    expect(page.frames.items.filter((frame) => frame.type === 'workflow_start')).to.have.length(1);
    expect(page.frames.items.at(-1)?.type).to.equal('workflow_end');
  });

  it('served by the service itself on a port outside the default origins, its Live page is accepted and shows the run', async () => {
    // The page's origin is the service's own (a browser's Origin header on a page it served).
    const port = new URL(svc.url).port;
    expect(['5173', '8000', '8010']).to.not.include(port);
    const started = await call(svc.url, 'POST', '/api/run', {
      workflow: 'test_deterministic',
      input_data: { label: 'demo' },
    });
    const runId = (started.body as { run_id: string }).run_id;
    const page = live(runId, `http://127.0.0.1:${port}`);
    const refused = page.closes
      .until((codes) => codes.length > 0, 'a close')
      .then((codes) => {
        throw new Error(`the page's socket was closed with ${codes.join(', ')}`);
      });
    await Promise.race([
      page.frames.until((all) => all.at(-1)?.type === 'workflow_end', 'workflow_end'),
      refused,
    ]);
    refused.catch(() => undefined);
    await page.pings.until((p) => p.length >= 3, 'three pings');
    expect(page.connections).to.equal(1);
    expect(page.closes.items).to.deep.equal([]);
    expect(page.frames.items.map((frame) => frame.seq)).to.deep.equal(
      page.frames.items.map((_, i) => i),
    );

    // Another origin is still refused, and the reference client retries it forever.
    const foreign = live(runId, 'http://evil.example');
    await foreign.closes.until((codes) => codes.length >= 2, 'two closes');
    expect(foreign.closes.items.slice(0, 2)).to.deep.equal([1008, 1008]);
    expect(foreign.frames.items).to.deep.equal([]);
  });

  it('reloads the Live page of a finished run: the replay once, then a quiet open socket', async () => {
    const started = await call(svc.url, 'POST', '/api/run', {
      workflow: 'test_deterministic',
      input_data: { label: 'demo' },
    });
    const runId = (started.body as { run_id: string }).run_id;
    await svc.finished(runId);
    const page = live(runId);
    await page.frames.until((all) => all.at(-1)?.type === 'workflow_end', 'the replay');
    await page.pings.until((p) => p.length >= 3, 'three pings');
    expect(page.connections).to.equal(1);
    const types = page.frames.items.map((frame) => frame.type);
    expect(types.filter((type) => type === 'workflow_start')).to.have.length(1);
    expect(types.filter((type) => type === 'workflow_end')).to.have.length(1);
  });

  it('keeps /ws/execution/latest open, as it does a socket for a run about to start', async () => {
    const page = live('latest');
    await page.pings.until((p) => p.length >= 3, 'three pings');
    expect(page.connections).to.equal(1);
    expect(page.frames.items).to.deep.equal([]);
  });

  it('renders run detail and DAG nodes without a numeric tier (no stray "0")', async () => {
    const started = await call(svc.url, 'POST', '/api/run', {
      workflow: 'test_deterministic',
      input_data: { label: 'ci' },
    });
    const runId = (started.body as { run_id: string }).run_id;
    await svc.finished(runId);
    const list = (await call(svc.url, 'GET', '/api/runs')).body as { filename: string }[];
    const filename = list[0]?.filename ?? '';
    const detail = (await call(svc.url, 'GET', `/api/runs/${filename}`)).body as {
      success_rate: unknown;
      steps: { step_name: string; tier: unknown }[];
    };
    expect(detail.success_rate).to.be.a('number');
    expect(detail.steps.map((step) => step.tier)).to.deep.equal(['0', '0', '0']);
    const dag = (await call(svc.url, 'GET', '/api/workflows/test_deterministic/dag')).body as {
      nodes: { tier: unknown }[];
    };
    for (const node of dag.nodes) expect(node.tier).to.equal('0');
  });
});

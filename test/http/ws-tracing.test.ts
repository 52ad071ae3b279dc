import { expect } from 'chai';
import { once } from 'node:events';
import { connect } from 'node:net';
import { WS_CLOSE } from '../../src/http/ws-hub.js';
import { ATTR } from '../../src/tracing/index.js';
import { connectWs, UpgradeRefused, type WsClient } from './events-fixtures.js';
import { call, startTestService, type TestService } from './harness.js';
import { startHttpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const TRACE_ID = '5b8efff798038103d269b633813fc60c';
const CALLER_SPAN = 'eee19b7ec3c1b174';
const KEY = 'ws-tracing-key-0123456789';
const ROUTE = '/ws/execution/:run_id';

/** Resolves with the HTTP status of a refused upgrade, or the close code of an accepted one. */
async function refusal(client: WsClient): Promise<number> {
  try {
    await client.opened;
  } catch (error) {
    if (error instanceof UpgradeRefused) return error.status;
    throw error;
  }
  return (await client.closed).code;
}

/** An upgrade request `ws` refuses itself (no Sec-WebSocket-Key): resolves with its status. */
async function badHandshake(base: string, path: string, key: string): Promise<number> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-API-Key: ${key}\r\n\r\n`,
  );
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await once(socket, 'close');
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(Buffer.concat(chunks).toString('latin1'))?.[1]);
}

describe('tracing of WebSocket upgrades (WS /ws/execution/{run_id})', () => {
  let svc: TestService | undefined;
  let receiver: OtlpReceiver | undefined;
  afterEach(async () => {
    await svc?.dispose();
    await receiver?.close();
    svc = undefined;
    receiver = undefined;
  });

  async function start(env: Record<string, string> = {}): Promise<TestService> {
    receiver = await startHttpReceiver();
    svc = await startTestService({
      env: {
        AGENTIC_TRACING: '1',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        ...env,
      },
    });
    return svc;
  }

  /** Shuts the service down (flushing the spans) and returns the upgrade spans. */
  async function upgradeSpans(s: TestService): Promise<ReceivedSpan[]> {
    await s.dispose();
    svc = undefined;
    return receiver!.spans.filter((span) => span.attributes[ATTR.WS_OUTCOME] !== undefined);
  }

  it("gives an accepted upgrade a server span by route template, in the caller's trace, ended once subscribed", async () => {
    const s = await start();
    const res = await call(s.url, 'POST', '/api/run', { workflow: 'test_deterministic' });
    const runId = (res.body as { run_id: string }).run_id;
    await s.finished(runId);
    const client = connectWs(`${s.url.replace(/^http/, 'ws')}/ws/execution/${runId}`, {
      traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`,
    });
    await client.opened;
    await client.events.until((events) => events.at(-1)?.type === 'workflow_end', 'workflow_end');
    // The socket stays open after the run; the span ended when the client was subscribed.
    const spans = await upgradeSpans(s);
    await client.closed;

    expect(spans).to.have.length(1);
    const span = spans[0]!;
    expect(span).to.deep.include({
      name: `GET ${ROUTE}`,
      traceId: TRACE_ID,
      parentSpanId: CALLER_SPAN,
      kind: 2,
      status: { code: 0, message: '' },
    });
    expect(span.attributes).to.deep.equal({
      'http.request.method': 'GET',
      'http.route': ROUTE,
      'http.response.status_code': 101,
      [ATTR.WS_OUTCOME]: 'subscribed',
      [ATTR.RUN_ID]: runId,
    });
  });

  it('ends refused upgrades (404, 429, and the close codes after the handshake) with error status', async () => {
    const s = await start({ AGENTIC_API_KEY: KEY, AGENTIC_RATE_LIMIT_DEFAULT: '5/minute' });
    const ws = s.url.replace(/^http/, 'ws');
    const withKey = { 'X-API-Key': KEY };
    expect(await refusal(connectWs(`${ws}/ws/elsewhere/x`, withKey))).to.equal(404);
    expect(await refusal(connectWs(`${ws}/ws/execution/some-run`))).to.equal(WS_CLOSE.POLICY);
    expect(await refusal(connectWs(`${ws}/ws/execution/bad.id`, withKey))).to.equal(
      WS_CLOSE.RUN_NOT_FOUND,
    );
    expect(await refusal(connectWs(`${ws}/ws/execution/some-run?api_key=${KEY}`))).to.equal(
      WS_CLOSE.POLICY,
    );
    expect(await badHandshake(s.url, '/ws/execution/some-run', KEY)).to.equal(400);
    expect(await refusal(connectWs(`${ws}/ws/execution/some-run`, withKey))).to.equal(429);
    const spans = await upgradeSpans(s);

    const summary = spans.map((span) => ({
      name: span.name,
      route: span.attributes['http.route'],
      outcome: span.attributes[ATTR.WS_OUTCOME],
      status: span.attributes['http.response.status_code'],
      closeCode: span.attributes[ATTR.WS_CLOSE_CODE],
      error: span.status.code,
    }));
    expect(summary).to.deep.equal([
      {
        name: 'GET',
        route: undefined,
        outcome: 'not_found',
        status: 404,
        closeCode: undefined,
        error: 2,
      },
      {
        name: `GET ${ROUTE}`,
        route: ROUTE,
        outcome: 'unauthorized',
        status: 101,
        closeCode: 1008,
        error: 2,
      },
      {
        name: `GET ${ROUTE}`,
        route: ROUTE,
        outcome: 'invalid_run_id',
        status: 101,
        closeCode: 4404,
        error: 2,
      },
      {
        name: `GET ${ROUTE}`,
        route: ROUTE,
        outcome: 'key_in_query',
        status: 101,
        closeCode: 1008,
        error: 2,
      },
      {
        name: `GET ${ROUTE}`,
        route: ROUTE,
        outcome: 'bad_handshake',
        status: undefined,
        closeCode: undefined,
        error: 2,
      },
      {
        name: `GET ${ROUTE}`,
        route: ROUTE,
        outcome: 'rate_limited',
        status: 429,
        closeCode: undefined,
        error: 2,
      },
    ]);
    // Never the raw path, nor the key of the query string.
    expect(JSON.stringify(spans)).not.to.include('some-run');
    expect(JSON.stringify(spans)).not.to.include(KEY);
  });
});

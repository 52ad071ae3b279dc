import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { createSseParser } from '../../src/llm/sse-parser.js';
import { ATTR } from '../../src/tracing/index.js';
import {
  openAiChunks,
  sendJson,
  sendSse,
  startFakeServer,
  type FakeServer,
} from '../fixtures/llm/fake-server.js';
import { call, startTestService, type TestService } from './harness.js';
import { startHttpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

/** In the chat's messages; it may reach spans only with AGENTIC_TRACE_SENSITIVE=1. */
const MARKER = 'chat-secret-51c2';
const ANSWER = 'Fallback answered, ✓';
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';
/** How long the fake provider takes over the rest of its answer, in ms (a slow model). */
const SLOW_REST_MS = 250;
/** Spans start on Date.now() (whole ms): times of two spans compare only to within 1 ms. */
const SKEW_NS = 1e6;

/** Holds until the first event of the run, then a chain of two quick steps. */
const SLOW = `name: slow_stream
description: A sleep, then an echo.
steps:
  - name: gate
    agent: tier0_sleep
    inputs: { ms: 400 }
  - name: after
    agent: tier0_echo
    depends_on: [gate]
    inputs: { n: 1 }
`;

/** POSTs a chat request and reads its SSE frames to the end; `onFrame` sees each as it comes. */
async function chat(
  base: string,
  body: unknown,
  headers: Record<string, string> = {},
  onFrame: (frame: Record<string, unknown>) => void = () => undefined,
): Promise<Record<string, unknown>[]> {
  const response = await fetch(`${base}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  expect(response.status).to.equal(200);
  const frames: Record<string, unknown>[] = [];
  const parser = createSseParser();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    for (const event of parser.push(chunk)) {
      const frame = JSON.parse(event.data) as Record<string, unknown>;
      frames.push(frame);
      onFrame(frame);
    }
  }
  return frames;
}

function one(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((span) => span.name === name);
  expect(
    found.map((span) => span.name),
    `one span named ${name} among ${spans.map((s) => s.name).join(', ')}`,
  ).to.deep.equal([name]);
  return found[0]!;
}

const SSE_DATA = (payloads: unknown[]): string =>
  payloads.map((p) => `data: ${typeof p === 'string' ? p : JSON.stringify(p)}\n\n`).join('');

describe('tracing of POST /api/chat and SSE streams', () => {
  let openai: FakeServer | undefined;
  let ollama: FakeServer | undefined;
  let svc: TestService | undefined;
  let receiver: OtlpReceiver | undefined;
  afterEach(async () => {
    await svc?.dispose();
    await Promise.all([openai?.close(), ollama?.close(), receiver?.close()]);
    svc = undefined;
    openai = ollama = receiver = undefined;
  });

  /**
   * A tier-2 chat whose first candidate (ollama) answers 404 and whose second (openai) streams
   * its answer in two parts, the second {@link SLOW_REST_MS} after the client has read a token
   * frame: the response's headers and first frames are out long before the stream ends.
   */
  async function fallbackChat(env: Record<string, string>): Promise<ReceivedSpan[]> {
    [openai, ollama, receiver] = await Promise.all([
      startFakeServer(),
      startFakeServer(),
      startHttpReceiver(),
    ]);
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    openai.handle(async (_req, res) => {
      const chunks = openAiChunks(ANSWER, {
        model: 'gpt-x',
        parts: 2,
        usage: { prompt: 7, completion: 6 },
      });
      await sendSse(res, chunks.slice(0, 2), { end: false });
      await released;
      await delay(SLOW_REST_MS);
      res.end(SSE_DATA(chunks.slice(2)));
    });
    ollama.handle((_req, res) =>
      sendJson(res, 404, { error: { message: 'model "not-pulled" not found' } }),
    );
    const s = (svc = await startTestService({
      env: {
        AGENTIC_NO_LLM: '0',
        OPENAI_BASE_URL: `${openai.url}/v1`,
        OPENAI_API_KEY: 'sk-test-key-0123456789abcdef',
        OLLAMA_HOST: ollama.url,
        AGENTIC_MODEL_TIER_2: 'ollama:not-pulled,openai:gpt-x',
        AGENTIC_TRACING: '1',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        ...env,
      },
    }));
    const frames = await chat(
      s.url,
      {
        tier: 2,
        messages: [
          { role: 'system', content: `Be brief. ${MARKER}` },
          { role: 'user', content: `Say hi ${MARKER}` },
        ],
      },
      { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
      (frame) => {
        if (frame.type === 'token') release();
      },
    );
    expect(frames.map((f) => f.type)).to.include.members(['route', 'token', 'done']);
    expect(frames.at(-1)).to.deep.include({ type: 'done', model: 'openai:gpt-x' });
    // Graceful shutdown flushes the batch.
    await s.dispose();
    svc = undefined;
    return receiver.spans;
  }

  it('makes each provider call of a chat, fallbacks included, a child of the request span', async () => {
    const spans = await fallbackChat({});
    const request = one(spans, 'POST /api/chat');
    expect(request).to.deep.include({ traceId: TRACE_ID, parentSpanId: CALLER_SPAN, kind: 2 });
    expect(request.attributes).to.deep.equal({
      'http.request.method': 'POST',
      'http.route': '/api/chat',
      'http.response.status_code': 200,
    });

    const refused = one(spans, 'chat ollama:not-pulled');
    expect(refused).to.deep.include({ traceId: TRACE_ID, parentSpanId: request.spanId, kind: 3 });
    expect(refused.attributes).to.deep.equal({
      [ATTR.GEN_AI_OPERATION]: 'chat',
      [ATTR.GEN_AI_REQUEST_MODEL]: 'ollama:not-pulled',
      [ATTR.GEN_AI_PROVIDER]: 'ollama',
      [ATTR.TIER]: 2,
      [ATTR.STATUS]: 'not_found',
      [ATTR.ERROR_TYPE]: 'not_found',
    });
    expect(refused.status.code).to.equal(2);

    const answered = one(spans, 'chat openai:gpt-x');
    expect(answered).to.deep.include({ traceId: TRACE_ID, parentSpanId: request.spanId, kind: 3 });
    expect(answered.attributes).to.deep.equal({
      [ATTR.GEN_AI_OPERATION]: 'chat',
      [ATTR.GEN_AI_REQUEST_MODEL]: 'openai:gpt-x',
      [ATTR.GEN_AI_PROVIDER]: 'openai',
      [ATTR.GEN_AI_RESPONSE_MODEL]: 'openai:gpt-x',
      [ATTR.GEN_AI_INPUT_TOKENS]: 7,
      [ATTR.GEN_AI_OUTPUT_TOKENS]: 6,
      [ATTR.GEN_AI_FINISH_REASON]: ['stop'],
      [ATTR.TIER]: 2,
      [ATTR.STATUS]: 'success',
    });
    expect(answered.status.code).to.equal(0);
    // The fallback comes after the refusal, and the request's span lasts until the stream
    // ended, after the model call (which went on while the client was reading tokens).
    expect(answered.startNs).to.be.at.least(refused.endNs - SKEW_NS);
    expect(request.startNs).to.be.at.most(refused.startNs + SKEW_NS);
    expect(request.endNs).to.be.at.least(answered.endNs - SKEW_NS);
    expect(request.endNs - request.startNs).to.be.at.least(SLOW_REST_MS * 1e6);

    // Safety control 6: nothing of the conversation or the answer.
    expect(JSON.stringify(spans)).not.to.include(MARKER);
    expect(JSON.stringify(spans)).not.to.include('Fallback answered');
  });

  it('puts the chat messages and the answer in the model spans only with AGENTIC_TRACE_SENSITIVE=1', async () => {
    const spans = await fallbackChat({ AGENTIC_TRACE_SENSITIVE: '1' });
    const refused = one(spans, 'chat ollama:not-pulled');
    const answered = one(spans, 'chat openai:gpt-x');
    for (const span of [refused, answered]) {
      expect(span.attributes[ATTR.SYSTEM_PROMPT]).to.equal(`Be brief. ${MARKER}`);
      expect(JSON.parse(span.attributes[ATTR.PROMPT] as string)).to.deep.equal([
        { role: 'user', content: `Say hi ${MARKER}` },
      ]);
    }
    expect(refused.attributes).not.to.have.property(ATTR.COMPLETION);
    expect(answered.attributes[ATTR.COMPLETION]).to.equal(ANSWER);
    // The request's span carries no body either way.
    expect(JSON.stringify(one(spans, 'POST /api/chat'))).not.to.include(MARKER);
  });

  it("ends an SSE request's span when its stream ends; a no-LLM chat's call is one span under it", async () => {
    receiver = await startHttpReceiver();
    const s = (svc = await startTestService({
      env: {
        AGENTIC_TRACING: '1',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      },
    }));
    await writeFile(join(s.workflowsDir, 'slow_stream.yaml'), SLOW);
    const started = await call(s.url, 'POST', '/api/run', { workflow: 'slow_stream' });
    expect(started.status, started.text).to.equal(200);
    const runId = (started.body as { run_id: string }).run_id;
    const stream = await fetch(`${s.url}/api/runs/${runId}/stream`);
    expect(stream.status).to.equal(200);
    const text = await stream.text();
    expect(text).to.include('"workflow_end"');
    await chat(s.url, { tier: 1, messages: [{ role: 'user', content: 'x' }] });
    await s.dispose();
    svc = undefined;
    const spans = receiver.spans;

    const streamed = one(spans, 'GET /api/runs/:run_id/stream');
    expect(streamed.attributes['http.response.status_code']).to.equal(200);
    // The stream ended after the run's last step, which ran after the 400 ms gate.
    expect(streamed.endNs).to.be.at.least(one(spans, 'step after').endNs - SKEW_NS);

    const request = one(spans, 'POST /api/chat');
    const placeholder = one(spans, 'chat placeholder');
    expect(placeholder).to.deep.include({ traceId: request.traceId, parentSpanId: request.spanId });
    expect(placeholder.attributes).to.deep.include({
      [ATTR.GEN_AI_OPERATION]: 'chat',
      [ATTR.GEN_AI_RESPONSE_MODEL]: 'placeholder',
      [ATTR.TIER]: 1,
      [ATTR.STATUS]: 'success',
    });
    expect(placeholder.startNs).to.be.at.least(request.startNs - SKEW_NS);
    expect(request.endNs).to.be.at.least(placeholder.endNs - SKEW_NS);
  });
});

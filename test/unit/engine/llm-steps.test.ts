import { expect } from 'chai';
import { join } from 'node:path';
import { createRuntime } from '../../../src/engine/runtime.js';
import type { Runtime, RuntimeOptions, WorkflowEvent } from '../../../src/engine/types.js';
import { createHttpClient, type HttpClient } from '../../../src/llm/http.js';
import { createOpenAiCompatibleProvider } from '../../../src/llm/providers/openai.js';
import { createLlmRouter } from '../../../src/llm/router.js';
import { LLM_NOT_CONFIGURED_MESSAGE } from '../../../src/llm/unconfigured.js';
import { removeDir, runFiles, tempDir } from '../../conformance/helpers.js';
import {
  openAiAnswer,
  openAiChunks,
  sendJson,
  sendSse,
  startFakeServer,
  type FakeServer,
} from '../../fixtures/llm/fake-server.js';

const REVIEW = {
  name: 'review_flow',
  steps: [
    {
      name: 'review',
      agent: 'tier2_reviewer',
      description: 'Review the code.',
      inputs: { code: '${inputs.code}' },
      outputs: { score: 'score', summary: 'summary' },
    },
  ],
  outputs: { score: { from: '${steps.review.outputs.score}' } },
};

describe('LLM steps through the tier router (fake OpenAI-compatible server)', () => {
  let dir: string;
  let server: FakeServer;
  let http: HttpClient;
  let runtime: Runtime | undefined;

  const make = (options: RuntimeOptions = {}) => {
    const router = createLlmRouter({
      providers: {
        get: (name) =>
          name === 'fake'
            ? createOpenAiCompatibleProvider({
                name: 'fake',
                http,
                chatUrl: () => `${server.url}/v1/chat/completions`,
                modelsUrl: `${server.url}/v1/models`,
                headers: {},
              })
            : undefined,
        missing: () => 'not configured',
      },
      chains: { '2': ['fake:small'] },
    });
    runtime = createRuntime({
      runsDir: join(dir, 'runs'),
      workflowsDir: join(dir, 'wf'),
      llm: router,
      tokenDeltaIntervalMs: 20,
      ...options,
    });
    return runtime;
  };

  beforeEach(async () => {
    dir = await tempDir('agentic-llm-steps-');
    server = await startFakeServer();
    http = createHttpClient({ provider: 'fake' });
  });
  afterEach(async () => {
    await runtime?.shutdown({ graceMs: 1000 });
    runtime = undefined;
    await http.close();
    await server.close();
    await removeDir(dir);
  });

  it('streams token_delta events, fills the declared outputs from a fenced JSON answer, records model, tokens and tier', async () => {
    const answer = 'Here you go:\n```json\n{"score": 8, "summary": "Clean code — one nit."}\n```';
    server.handle((_req, res) =>
      sendSse(
        res,
        openAiChunks(answer, { model: 'small', parts: 12, usage: { prompt: 40, completion: 21 } }),
        {
          pieceBytes: 5,
        },
      ),
    );
    const rt = make();
    const events: WorkflowEvent[] = [];
    rt.subscribe((event) => events.push(event));
    const record = await rt.run({ workflow: REVIEW, input: { code: 'x = 1' } });
    expect(record.status).to.equal('success');
    const step = record.steps[0]!;
    expect(step.output).to.deep.equal({
      score: 8,
      summary: 'Clean code — one nit.',
      raw_response: answer,
    });
    expect(step.model_used).to.equal('fake:small');
    expect(step.tokens_used).to.deep.equal({ input: 40, output: 21, total: 61 });
    expect(String(step.tier)).to.equal('2');
    expect(record.final_output).to.deep.equal({ score: 8 });

    const deltas = events.filter((e) => e.type === 'token_delta');
    expect(deltas.length).to.be.greaterThan(0);
    expect(deltas.map((e) => (e.type === 'token_delta' ? e.delta : '')).join('')).to.equal(answer);
    const types = events.map((e) => e.type);
    expect(types.lastIndexOf('token_delta')).to.be.lessThan(types.indexOf('step_end'));
    expect(types.indexOf('step_start')).to.be.lessThan(types.indexOf('token_delta'));
    const end = events.find((e) => e.type === 'step_end');
    expect(end).to.deep.include({
      model_used: 'fake:small',
      tokens_used: { input: 40, output: 21, total: 61 },
    });

    const [file] = await runFiles(join(dir, 'runs'));
    expect(file!.record.steps[0]).to.deep.include({
      model_used: 'fake:small',
      tokens_used: { input: 40, output: 21, total: 61 },
    });

    const prompt = (server.requests[0]!.body as { messages: { role: string; content: string }[] })
      .messages;
    expect(prompt[0]!.role).to.equal('system');
    expect(prompt[0]!.content).to.match(/senior software engineer/);
    expect(prompt[1]!.content).to.equal(
      'Review the code.\n\n## code\nx = 1\n\nAnswer with one JSON object whose keys are "score", "summary".',
    );
  });

  it('fails an answer that cannot fill a declared output, retried per max_attempts', async () => {
    let calls = 0;
    server.handle((_req, res) => {
      calls++;
      sendJson(
        res,
        200,
        openAiAnswer(calls === 1 ? '{"score": 3}' : '{"score": 4, "summary": "ok"}', {
          model: 'small',
        }),
      );
    });
    const rt = make();
    const record = await rt.run({ workflow: REVIEW, input: { code: 'x' }, maxAttempts: 2 });
    expect(record.status).to.equal('success');
    expect(calls).to.equal(2);
    expect(record.steps[0]!.output).to.deep.include({ score: 4, summary: 'ok' });

    server.handle((_req, res) => sendJson(res, 200, openAiAnswer('I think it is fine.')));
    const failed = await rt.run({ workflow: REVIEW, input: { code: 'x' } });
    expect(failed.status).to.equal('failed');
    expect(failed.steps[0]!.error).to.equal(
      'model answer cannot fill the declared outputs (score, summary): the answer is not a JSON object',
    );
  });

  it("counts every attempt's tokens: a retried answer's, and a failed step's with its model", async () => {
    let calls = 0;
    server.handle((_req, res) => {
      calls++;
      const usable = calls === 2;
      sendJson(
        res,
        200,
        openAiAnswer(usable ? '{"score": 4, "summary": "ok"}' : '{"score": 3}', {
          model: 'small',
          usage: usable ? { prompt: 11, completion: 3 } : { prompt: 10, completion: 2 },
        }),
      );
    });
    const rt = make();
    const ends: WorkflowEvent[] = [];
    rt.subscribe((event) => {
      if (event.type === 'step_end') ends.push(event);
    });
    const retried = await rt.run({ workflow: REVIEW, input: { code: 'x' }, maxAttempts: 2 });
    expect(retried.status).to.equal('success');
    expect(retried.steps[0]).to.deep.include({
      model_used: 'fake:small',
      tokens_used: { input: 21, output: 5, total: 26 },
    });

    calls = 2; // every answer from here on is unusable
    const failed = await rt.run({ workflow: REVIEW, input: { code: 'x' }, maxAttempts: 2 });
    expect(failed.status).to.equal('failed');
    expect(failed.steps[0]).to.deep.include({
      model_used: 'fake:small',
      tokens_used: { input: 20, output: 4, total: 24 },
    });
    expect(failed.steps[0]).not.to.have.property('messages');
    const finalEnds = ends.filter(
      (event) => event.type === 'step_end' && event.status !== 'retrying',
    );
    expect(finalEnds.map((event) => event.type === 'step_end' && event.tokens_used)).to.deep.equal([
      { input: 21, output: 5, total: 26 },
      { input: 20, output: 4, total: 24 },
    ]);
  });

  it('a provider failure fails the step (never a disguised success)', async () => {
    server.handle((_req, res) => sendJson(res, 500, { error: { message: 'upstream exploded' } }));
    const record = await make().run({ workflow: REVIEW, input: { code: 'x' } });
    expect(record.status).to.equal('failed');
    expect(record.steps[0]!.error).to.match(
      /every model of tier 2 failed: fake:small: fake: HTTP 500: upstream exploded/,
    );
  });

  it('cancelling the run aborts the HTTP request mid-stream', async () => {
    server.handle(async (_req, res) => {
      await sendSse(res, openAiChunks('thinking', { parts: 1 }).slice(0, 2), { end: false });
    });
    const rt = make();
    const handle = await rt.start({ workflow: REVIEW, input: { code: 'x' } });
    const closed = server.clientClosed();
    for await (const event of handle.events) {
      if (event.type === 'token_delta') break;
    }
    rt.cancel(handle.runId, 'user cancelled');
    await closed;
    const record = await handle.done;
    expect(record.status).to.equal('failed');
  });

  it('a step timeout aborts the HTTP request', async () => {
    server.handle(() => undefined); // never answers
    const closed = server.clientClosed();
    const timed = { ...REVIEW, steps: [{ ...REVIEW.steps[0]!, timeout_seconds: 0.2 }] };
    const record = await make().run({ workflow: timed, input: { code: 'x' } });
    await closed;
    expect(record.steps[0]!.error).to.equal('step timed out after 0.2s');
  });

  it('counts the tokens of a usage chunk seen before a connection reset, over every retried attempt', async () => {
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunks = openAiChunks('partial answer', {
        model: 'small',
        usage: { prompt: 100, completion: 50 },
      }).filter((chunk) => chunk !== '[DONE]');
      const text = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('');
      // The usage chunk reaches the client, then the connection is reset before [DONE].
      res.write(text, () => res.socket?.resetAndDestroy());
    });
    const retried = { ...REVIEW, steps: [{ ...REVIEW.steps[0]!, max_attempts: 3 }] };
    const record = await make({ retryBaseMs: 0 }).run({ workflow: retried, input: { code: 'x' } });
    expect(server.requests).to.have.length(3);
    const step = record.steps[0]!;
    expect(step.status).to.equal('failed');
    expect(step.tokens_used).to.deep.equal({ input: 300, output: 150, total: 450 });
  });

  it('a step without timeout_seconds ends at the runtime default step timeout', async () => {
    server.handle(() => undefined); // never answers
    const closed = server.clientClosed();
    const record = await make({ stepTimeoutMs: 200 }).run({
      workflow: REVIEW,
      input: { code: 'x' },
    });
    await closed;
    expect(record.steps[0]!.error).to.equal('step timed out after 0.2s');
  });

  it('without a provider (no llm given, no-LLM off) an LLM step fails naming the variables to set', async () => {
    runtime = createRuntime({ runsDir: join(dir, 'runs'), workflowsDir: join(dir, 'wf') });
    const record = await runtime.run({ workflow: REVIEW, input: { code: 'x' } });
    expect(record.steps[0]!.error).to.equal(LLM_NOT_CONFIGURED_MESSAGE);
    expect(LLM_NOT_CONFIGURED_MESSAGE).to.include('OPENAI_API_KEY');
  });
});

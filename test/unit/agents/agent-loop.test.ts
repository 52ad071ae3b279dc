import { expect } from 'chai';
import type { ServerResponse } from 'node:http';
import {
  agentLoopLimits,
  DEFAULT_AGENT_LOOP_LIMITS,
  runAgentLoop,
  type AgentLoopLimits,
} from '../../../src/agents/agent-loop.js';
import { AgentFailure } from '../../../src/agents/types.js';
import { createHttpClient, type HttpClient } from '../../../src/llm/http.js';
import { LlmError } from '../../../src/llm/llm-error.js';
import { createNoLlmClient } from '../../../src/llm/no-llm.js';
import { createAnthropicProvider } from '../../../src/llm/providers/anthropic.js';
import { createGeminiProvider } from '../../../src/llm/providers/gemini.js';
import { createOpenAiCompatibleProvider } from '../../../src/llm/providers/openai.js';
import { createLlmRouter } from '../../../src/llm/router.js';
import type { LlmClient, Provider, ToolDefinition } from '../../../src/llm/types.js';
import { createToolKit, type ToolKit } from '../../../src/tools/index.js';
import {
  sendJson,
  startFakeServer,
  type FakeServer,
  type RecordedRequest,
} from '../../fixtures/llm/fake-server.js';

const KEY = 'sk-test-secretsecretsecret';
const TOOLS = ['memory_set', 'memory_get'];

function definitions(kit: ToolKit): ToolDefinition[] {
  return TOOLS.map((name) => {
    const tool = kit.registry.get(name)!;
    return { name, description: tool.description, parameters: tool.parameters };
  });
}

/** Runs the loop for step `s` of workflow `wf` with the kit's real registry. */
function loop(llm: LlmClient, kit: ToolKit, limits: AgentLoopLimits, script?: unknown) {
  const signal = new AbortController().signal;
  const caller = { workflow: 'wf', step: 's', runId: 'r1', allowed: TOOLS };
  return runAgentLoop({
    llm,
    request: {
      tier: 1,
      model: 'p:model-x',
      system: 'sys',
      prompt: 'remember x=42, then read it back',
      signal,
      ...(script === undefined ? {} : { script }),
    },
    tools: definitions(kit),
    callTool: (name, args) => kit.call(name, args, caller, signal),
    limits,
    step: 's',
  });
}

interface Protocol {
  name: string;
  provider(url: string, http: HttpClient): Provider;
  /** The answer calling `memory_set` then, in the second request, `memory_get`; then text. */
  answer(res: ServerResponse, index: number): void;
  /** The tool results the request at `index` carries back, in the protocol's own form. */
  results(request: RecordedRequest): unknown[];
  /** The tools as the request declares them. */
  toolNames(request: RecordedRequest): string[];
}

const CALLS = [
  { name: 'memory_set', args: { key: 'x', value: 42 } },
  { name: 'memory_get', args: { key: 'x' } },
];

const PROTOCOLS: Protocol[] = [
  {
    name: 'OpenAI tools / tool_calls',
    provider: (url, http) =>
      createOpenAiCompatibleProvider({
        name: 'p',
        http,
        chatUrl: () => `${url}/v1/chat/completions`,
        modelsUrl: `${url}/v1/models`,
        headers: { authorization: `Bearer ${KEY}` },
      }),
    answer(res, index) {
      const call = CALLS[index];
      const message =
        call === undefined
          ? { role: 'assistant', content: 'x is 42' }
          : {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: `call_${index}`,
                  type: 'function',
                  function: { name: call.name, arguments: JSON.stringify(call.args) },
                },
              ],
            };
      sendJson(res, 200, {
        model: 'model-x',
        choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
    },
    results: (request) =>
      ((request.body as { messages: { role: string }[] }).messages ?? []).filter(
        (m) => m.role === 'tool',
      ),
    toolNames: (request) =>
      (request.body as { tools: { type: string; function: { name: string } }[] }).tools.map(
        (t) => `${t.type}:${t.function.name}`,
      ),
  },
  {
    name: 'Anthropic tool_use / tool_result blocks',
    provider: (url, http) => createAnthropicProvider({ http, baseUrl: url, apiKey: KEY }),
    answer(res, index) {
      const call = CALLS[index];
      sendJson(res, 200, {
        id: `msg_${index}`,
        type: 'message',
        role: 'assistant',
        model: 'model-x',
        content:
          call === undefined
            ? [{ type: 'text', text: 'x is 42' }]
            : [{ type: 'tool_use', id: `tu_${index}`, name: call.name, input: call.args }],
        stop_reason: call ? 'tool_use' : 'end_turn',
        usage: { input_tokens: 10, output_tokens: 5 },
      });
    },
    results: (request) =>
      (request.body as { messages: { content: { type: string }[] }[] }).messages
        .flatMap((m) => m.content)
        .filter((block) => block.type === 'tool_result'),
    toolNames: (request) =>
      (request.body as { tools: { name: string; input_schema: unknown }[] }).tools.map(
        (t) => `${typeof t.input_schema}:${t.name}`,
      ),
  },
  {
    name: 'Gemini functionDeclarations / functionCall / functionResponse',
    provider: (url, http) => createGeminiProvider({ http, baseUrl: url, apiKey: KEY }),
    answer(res, index) {
      const call = CALLS[index];
      sendJson(res, 200, {
        candidates: [
          {
            content: {
              role: 'model',
              parts:
                call === undefined
                  ? [{ text: 'x is 42' }]
                  : [{ functionCall: { name: call.name, args: call.args } }],
            },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      });
    },
    results: (request) =>
      (request.body as { contents: { parts: { functionResponse?: unknown }[] }[] }).contents
        .flatMap((c) => c.parts)
        .filter((part) => part.functionResponse !== undefined),
    toolNames: (request) =>
      (
        request.body as { tools: { functionDeclarations: { name: string }[] }[] }
      ).tools[0]!.functionDeclarations.map((d) => `function:${d.name}`),
  },
];

describe('agent loop', () => {
  let kit: ToolKit;
  beforeEach(async () => {
    kit = await createToolKit();
  });
  afterEach(() => kit.close());

  for (const protocol of PROTOCOLS) {
    describe(`over ${protocol.name} (fake server on 127.0.0.1)`, () => {
      let server: FakeServer;
      let http: HttpClient;
      beforeEach(async () => {
        server = await startFakeServer();
        http = createHttpClient({ provider: 'p', secrets: [KEY] });
      });
      afterEach(async () => {
        await http.close();
        await server.close();
      });

      it('sends the tools, runs each call through the registry, returns results in the native form, records every message', async () => {
        server.handle((_request, res, index) => protocol.answer(res, index));
        const provider = protocol.provider(server.url, http);
        const router = createLlmRouter({
          providers: { get: (name) => (name === 'p' ? provider : undefined), missing: () => '' },
          chains: {},
        });
        const result = await loop(router, kit, DEFAULT_AGENT_LOOP_LIMITS);

        expect(result.response.text).to.equal('x is 42');
        expect(result.tokensUsed).to.deep.equal({ input: 30, output: 15, total: 45 });
        expect(server.requests).to.have.length(3);
        for (const request of server.requests) {
          expect(protocol.toolNames(request).map((n) => n.split(':')[1])).to.deep.equal(TOOLS);
        }
        expect(protocol.results(server.requests[0]!)).to.have.length(0);
        expect(protocol.results(server.requests[1]!)).to.have.length(1);
        const last = JSON.stringify(protocol.results(server.requests[2]!));
        // The second call read back what the first stored, through the real memory tools.
        expect(last).to.contain('{\\"found\\":true,\\"value\\":42}');

        expect(result.messages.map((m) => [m.type, m.sender, m.recipient])).to.deep.equal([
          ['tool_call', 's', 'memory_set'],
          ['tool_result', 'memory_set', 's'],
          ['tool_call', 's', 'memory_get'],
          ['tool_result', 'memory_get', 's'],
        ]);
        const [call, stored, , read] = result.messages;
        expect(call!.content).to.deep.equal({
          name: 'memory_set',
          arguments: '{"key":"x","value":42}',
        });
        expect(stored!.parent_id).to.equal(call!.id);
        expect(stored!.content).to.equal('{"stored":true}');
        expect(stored!.metadata).to.include({ round: 1, outcome: 'ok', truncated: false });
        expect(read!.content).to.equal('{"found":true,"value":42}');
        expect(read!.metadata).to.include({ round: 2, outcome: 'ok' });
      });
    });
  }

  it('Anthropic: a refused or failed call goes back as a tool_result with is_error', async () => {
    const server = await startFakeServer((_request, res, index) =>
      sendJson(res, 200, {
        id: `msg_${index}`,
        type: 'message',
        role: 'assistant',
        model: 'model-x',
        content:
          index === 0
            ? [{ type: 'tool_use', id: 'tu_0', name: 'memory_get', input: {} }]
            : [{ type: 'text', text: 'gave up' }],
        stop_reason: index === 0 ? 'tool_use' : 'end_turn',
        usage: { input_tokens: 1, output_tokens: 1 },
      }),
    );
    const http = createHttpClient({ provider: 'p', secrets: [KEY] });
    try {
      const provider = PROTOCOLS[1]!.provider(server.url, http);
      const router = createLlmRouter({
        providers: { get: () => provider, missing: () => '' },
        chains: {},
      });
      const result = await loop(router, kit, DEFAULT_AGENT_LOOP_LIMITS);
      expect(result.response.text).to.equal('gave up');
      const [block] = PROTOCOLS[1]!.results(server.requests[1]!) as Record<string, unknown>[];
      expect(block).to.include({ type: 'tool_result', tool_use_id: 'tu_0', is_error: true });
      expect(block!.content).to.match(/invalid arguments/);
    } finally {
      await http.close();
      await server.close();
    }
  });

  it('Gemini: no JSON mime type when tools are offered (the API refuses the pair)', async () => {
    const server = await startFakeServer((_request, res, index) =>
      PROTOCOLS[2]!.answer(res, index + 2),
    );
    const http = createHttpClient({ provider: 'gemini', secrets: [KEY] });
    try {
      const provider = createGeminiProvider({ http, baseUrl: server.url, apiKey: KEY });
      const base = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };
      const signal = new AbortController().signal;
      await provider.chat({ ...base, json: true, signal, tools: definitions(kit) });
      await provider.chat({ ...base, json: true, signal });
      const configs = server.requests.map(
        (r) => (r.body as { generationConfig?: unknown }).generationConfig,
      );
      expect(configs).to.deep.equal([undefined, { responseMimeType: 'application/json' }]);
    } finally {
      await http.close();
      await server.close();
    }
  });

  describe('bounds (scripted placeholder model)', () => {
    const llm = createNoLlmClient();
    const set = (key: string, value: unknown) => ({ tool: 'memory_set', args: { key, value } });

    it('fails with an error naming AGENTIC_AGENT_MAX_ROUNDS when the model still calls tools after the last round, keeping the messages', async () => {
      const script = [[set('a', 1)], [set('b', 2)], [set('c', 3)]];
      const error = await loop(llm, kit, { ...DEFAULT_AGENT_LOOP_LIMITS, maxRounds: 2 }, script)
        .then(() => undefined)
        .catch((e: unknown) => e);
      expect(error).to.be.instanceOf(AgentFailure);
      const failure = error as AgentFailure;
      expect(failure.message).to.equal(
        'agent loop: the model still called tools (memory_set) after 2 rounds (AGENTIC_AGENT_MAX_ROUNDS)',
      );
      expect(failure.messages.filter((m) => m.type === 'tool_result')).to.have.length(2);
      expect(failure.modelUsed).to.equal('placeholder');
      // Exactly the rounds allowed ran: c was never stored.
      const [, , third] = await Promise.all(
        ['a', 'b', 'c'].map((key) =>
          kit.call('memory_get', { key }, callerOf(), new AbortController().signal),
        ),
      );
      expect(third).to.deep.equal({ found: false, value: null });
    });

    it('a model call that fails after its provider reported tokens adds them to the failed loop', async () => {
      let calls = 0;
      const failing: LlmClient = {
        complete() {
          calls++;
          if (calls === 1) {
            return Promise.resolve({
              text: '',
              model: 'p:model-x',
              tokensUsed: { input: 10, output: 2, total: 12 },
              toolCalls: [{ id: 'c1', name: 'memory_set', arguments: '{"key":"a","value":1}' }],
            });
          }
          const error = new LlmError('transient', 'ECONNRESET: other side closed', {
            provider: 'p',
          });
          error.spentTokens = { input: 20, output: 5, total: 25 };
          return Promise.reject(error);
        },
      };
      const error = await loop(failing, kit, DEFAULT_AGENT_LOOP_LIMITS)
        .then(() => undefined)
        .catch((e: unknown) => e);
      expect(error).to.be.instanceOf(AgentFailure);
      expect((error as AgentFailure).tokensUsed).to.deep.equal({ input: 30, output: 7, total: 37 });
    });

    it('ends with the final answer when the script fits the rounds', async () => {
      const script = [[set('a', 1)], [set('b', 2)]];
      const result = await loop(llm, kit, { ...DEFAULT_AGENT_LOOP_LIMITS, maxRounds: 2 }, script);
      expect(result.response.text).to.match(/^\[placeholder tier1 response/);
      expect(result.messages).to.have.length(4);
    });

    it('runs at most AGENTIC_AGENT_MAX_CALLS_PER_ROUND calls of a round and refuses the rest to the model', async () => {
      const script = [[set('a', 1), set('b', 2), set('c', 3)]];
      const result = await loop(
        llm,
        kit,
        { ...DEFAULT_AGENT_LOOP_LIMITS, maxCallsPerRound: 2 },
        script,
      );
      const results = result.messages.filter((m) => m.type === 'tool_result');
      expect(results.map((m) => m.metadata.outcome)).to.deep.equal(['ok', 'ok', 'refused']);
      expect(results[2]!.content).to.equal(
        '{"error":"not run: at most 2 tool calls per round (AGENTIC_AGENT_MAX_CALLS_PER_ROUND)"}',
      );
      const c = await kit.call(
        'memory_get',
        { key: 'c' },
        callerOf(),
        new AbortController().signal,
      );
      expect(c).to.deep.equal({ found: false, value: null });
    });

    it('cuts results to AGENTIC_TOOL_RESULT_MAX_CHARS with a marker', async () => {
      const script = [
        [set('big', 'y'.repeat(500))],
        [{ tool: 'memory_get', args: { key: 'big' } }],
      ];
      const result = await loop(
        llm,
        kit,
        { ...DEFAULT_AGENT_LOOP_LIMITS, maxResultChars: 100 },
        script,
      );
      const read = result.messages[3]!;
      const text = read.content as string;
      expect(text.slice(0, 100)).to.equal(`{"found":true,"value":"${'y'.repeat(77)}`);
      expect(text.slice(100)).to.equal('\n[truncated: 425 more characters]');
      expect(read.metadata.truncated).to.equal(true);
    });

    it('gives the model a tool error (not allowed, invalid arguments) as the result, and goes on', async () => {
      const script = [[{ tool: 'file_write', args: { path: 'x', content: 'y' } }, set('', 1)]];
      const result = await loop(llm, kit, DEFAULT_AGENT_LOOP_LIMITS, script);
      const results = result.messages.filter((m) => m.type === 'tool_result');
      expect(results.map((m) => m.metadata.outcome)).to.deep.equal(['error', 'error']);
      expect(results[0]!.content).to.match(/not allowed: step 's' does not list it in tools/);
      expect(results[1]!.content).to.match(/invalid arguments/);
    });

    it('reads the limits from the tool options, defaults for the rest', () => {
      expect(agentLoopLimits({ agentMaxRounds: 3 })).to.deep.equal({
        maxRounds: 3,
        maxCallsPerRound: 12,
        maxResultChars: 12_000,
      });
    });
  });
});

function callerOf() {
  return { workflow: 'wf', step: 's', runId: 'r1', allowed: TOOLS };
}

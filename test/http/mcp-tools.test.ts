/**
 * MCP servers' tools (issue 28 point 1) against real MCP servers written with the official SDK
 * (test/fixtures/mcp): one over stdio (a child process), one over Streamable HTTP on 127.0.0.1.
 * The agent loop is driven by the no-LLM placeholder's scripted tool calls, and once by the fake
 * OpenAI provider on 127.0.0.1 answering with a tool call.
 */
import { expect } from 'chai';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import type { WorkflowEvent } from '../../src/generated/events.js';
import type { AgentMessage } from '../../src/generated/run-record.js';
import type { ToolsResponse } from '../../src/generated/api/tools-response.js';
import {
  refusingPort,
  sendJson,
  startFakeServer,
  type FakeServer,
} from '../fixtures/llm/fake-server.js';
import { startHttpMcpServer, type TestHttpMcpServer } from '../fixtures/mcp/http-server.js';
import { call, startTestService, type TestService } from './harness.js';
import { sampleValue } from './metrics-scrape.js';

const STDIO_SERVER = join(packageRoot, 'test', 'fixtures', 'mcp', 'stdio-server.ts');

/** The servers file: `local` over stdio, `remote` over HTTP, plus `extra` lines (YAML). */
function mcpYaml(options: { remoteUrl: string; callsFile: string; extra?: string }): string {
  return `servers:
  local:
    transport: stdio
    command: ${JSON.stringify(process.execPath)}
    args: [--import, tsx, ${JSON.stringify(STDIO_SERVER)}]
    cwd: ${JSON.stringify(packageRoot)}
    connect_timeout_seconds: 60
    env:
      MCP_TEST_CALLS_FILE: ${JSON.stringify(options.callsFile)}
      MCP_TEST_TOKEN: { secret: MCP_TEST_TOKEN_SECRET }
  remote:
    transport: http
    url: ${options.remoteUrl}
    connect_timeout_seconds: 30
    timeout_seconds: 1
    high_risk: [write_note]
    headers:
      X-Api-Key: { secret: MCP_REMOTE_KEY }
${options.extra ?? ''}breaker:
  threshold: 1
  cooldown_seconds: 600
`;
}

/** A step of `tools` whose placeholder model calls `rounds` (each a list of {tool, args}). */
function scripted(name: string, tools: string[], rounds: unknown[][]): string {
  return `name: ${name}
steps:
  - name: agent
    agent: tier1_writer
    description: Use the tools.
    tools: ${JSON.stringify(tools)}
    inputs:
      placeholder_tool_calls: ${JSON.stringify(rounds)}
`;
}

describe('MCP servers as tools (stdio and Streamable HTTP, official SDK servers)', function () {
  this.timeout(120_000);
  let dir: string;
  let callsFile: string;
  let remote: TestHttpMcpServer | undefined;
  let svc: TestService | undefined;
  let provider: FakeServer | undefined;
  let hanging: { server: Server; sockets: Set<Socket> } | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-mcp-'));
    callsFile = join(dir, 'calls.txt');
    remote = await startHttpMcpServer({ callsFile });
  });

  afterEach(async () => {
    await svc?.dispose();
    svc = undefined;
    await remote?.close();
    remote = undefined;
    await provider?.close();
    provider = undefined;
    if (hanging !== undefined) {
      for (const socket of hanging.sockets) socket.destroy();
      await new Promise((resolve) => hanging!.server.close(resolve));
      hanging = undefined;
    }
    await rm(dir, { recursive: true, force: true });
  });

  async function start(env: Record<string, string> = {}, extra?: string): Promise<TestService> {
    const file = join(dir, 'mcp.yaml');
    await writeFile(
      file,
      mcpYaml({ remoteUrl: remote!.url, callsFile, ...(extra === undefined ? {} : { extra }) }),
    );
    svc = await startTestService({
      env: {
        AGENTIC_MCP_CONFIG: file,
        MCP_TEST_TOKEN_SECRET: 'token-from-the-secret-provider',
        MCP_REMOTE_KEY: 'remote-key-0123456789',
        ...env,
      },
    });
    return svc;
  }

  async function run(service: TestService, name: string, yaml: string) {
    await writeFile(join(service.workflowsDir, `${name}.yaml`), yaml);
    const res = await call(service.url, 'POST', '/api/run', { workflow: name });
    expect(res.status, res.text).to.equal(200);
    const runId = (res.body as { run_id: string }).run_id;
    return { runId, record: service.finished(runId) };
  }

  const results = (messages: AgentMessage[] | undefined) =>
    (messages ?? []).filter((m) => m.type === 'tool_result');

  async function calls(): Promise<string[]> {
    const text = await readFile(callsFile, 'utf8').catch(() => '');
    return text.split('\n').filter((line) => line !== '');
  }

  it("GET /api/tools lists the built-in tools and each server's tools with schema and server; HTTP headers come from the secret provider", async () => {
    const service = await start();
    const res = await call(service.url, 'GET', '/api/tools');
    expect(res.status, res.text).to.equal(200);
    const body = res.body as ToolsResponse;
    expect(body.servers).to.deep.equal([
      {
        name: 'local',
        transport: 'stdio',
        state: 'connected',
        tools: ['add', 'write_note', 'env', 'crash', 'hang', 'fail'].map((t) => `mcp:local:${t}`),
      },
      {
        name: 'remote',
        transport: 'http',
        state: 'connected',
        tools: ['add', 'write_note', 'env', 'crash', 'hang', 'fail'].map((t) => `mcp:remote:${t}`),
      },
    ]);
    const byName = new Map(body.tools.map((tool) => [tool.name, tool]));
    expect(byName.get('file_read')).to.include({ source: 'built-in', risk: 'low' });
    expect(byName.get('mcp:local:add')).to.deep.equal({
      name: 'mcp:local:add',
      source: 'mcp',
      server: 'local',
      description: 'Adds two numbers.',
      risk: 'low',
      parameters: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
        additionalProperties: false,
      },
    });
    expect(byName.get('mcp:remote:write_note')).to.include({ risk: 'high', server: 'remote' });
    expect(remote!.headers.length).to.be.above(0);
    for (const headers of remote!.headers) {
      expect(headers['x-api-key']).to.equal('remote-key-0123456789');
    }
    // The file names the secret, never its value.
    expect(await readFile(join(dir, 'mcp.yaml'), 'utf8')).not.to.contain('remote-key');
  });

  it('a step allowed a tool calls it through the agent loop (fake OpenAI provider answering with a tool call); the result reaches the step output, the metrics count it', async () => {
    let completions = 0;
    provider = await startFakeServer((request, res) => {
      if (!request.path.endsWith('/chat/completions')) {
        sendJson(res, 200, { object: 'list', data: [{ id: 'gpt-test', object: 'model' }] });
        return;
      }
      const index = completions++;
      const body = request.body as {
        messages: { role: string; content: string }[];
        tools?: { function: { name: string; parameters: unknown } }[];
      };
      if (index === 0) {
        sendJson(res, 200, {
          id: 'c1',
          object: 'chat.completion',
          model: 'gpt-test',
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: null,
                tool_calls: [
                  {
                    id: 'call_1',
                    type: 'function',
                    function: { name: body.tools![0]!.function.name, arguments: '{"a":2,"b":3}' },
                  },
                ],
              },
              finish_reason: 'tool_calls',
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        });
        return;
      }
      const result = body.messages.at(-1)!.content;
      sendJson(res, 200, {
        id: 'c2',
        object: 'chat.completion',
        model: 'gpt-test',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: JSON.stringify({ answer: result }) },
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
    });
    const service = await start({
      AGENTIC_NO_LLM: '0',
      AGENTIC_METRICS: '1',
      OPENAI_BASE_URL: `${provider.url}/v1`,
      OPENAI_API_KEY: 'sk-mcp-test-0123456789',
      AGENTIC_MODEL_TIER_1: 'openai:gpt-test',
    });
    const { record } = await run(
      service,
      'mcp_add',
      `name: mcp_add
steps:
  - name: adder
    agent: tier1_writer
    description: Add 2 and 3 with the tool.
    tools: ["mcp:local:add"]
    outputs:
      answer: sum
`,
    );
    const done = await record;
    expect(done.status, done.error ?? '').to.equal('success');
    const step = done.steps[0]!;
    expect(step.output).to.include({ answer: '{"sum":5}' });
    expect(step.messages!.map((m) => `${m.type} ${m.sender}→${m.recipient}`)).to.deep.equal([
      'tool_call adder→mcp:local:add',
      'tool_result mcp:local:add→adder',
    ]);
    // The model was offered the tool under a name providers accept, with the server's schema.
    const first = provider.requests.find((r) => r.path.endsWith('/chat/completions'))!;
    const offered = (first.body as { tools: { function: unknown }[] }).tools;
    expect(offered).to.deep.equal([
      {
        type: 'function',
        function: {
          name: 'mcp__local__add',
          description: 'Adds two numbers.',
          parameters: {
            type: 'object',
            properties: { a: { type: 'number' }, b: { type: 'number' } },
            required: ['a', 'b'],
            additionalProperties: false,
          },
        },
      },
    ]);
    expect(await calls()).to.deep.equal(['add 2 3']);
    const metrics = (await call(service.url, 'GET', '/metrics')).text;
    expect(
      sampleValue(metrics, 'agentic_tool_calls_total', {
        tool: 'mcp:local:add',
        outcome: 'success',
      }),
    ).to.equal(1);
  });

  it('refuses a tool the step does not list and bad arguments, before anything reaches the server', async () => {
    const service = await start();
    const { record } = await run(
      service,
      'mcp_refused',
      scripted(
        'mcp_refused',
        ['mcp:local:add'],
        [
          [
            { tool: 'mcp:local:write_note', args: { text: 'sneaky' } },
            { tool: 'mcp:local:add', args: { a: 'two', b: 3 } },
            { tool: 'mcp:local:add', args: { a: 1, b: 1 } },
          ],
        ],
      ),
    );
    const done = await record;
    expect(done.status, done.error ?? '').to.equal('success');
    const answers = results(done.steps[0]!.messages);
    expect(answers.map((m) => m.metadata.outcome)).to.deep.equal(['error', 'error', 'ok']);
    expect(answers[0]!.content).to.contain(
      "tool mcp:local:write_note: not allowed: step 'agent' does not list it in tools",
    );
    expect(answers[1]!.content).to.contain(
      'tool mcp:local:add: invalid arguments: /a must be number',
    );
    expect(answers[2]!.content).to.equal('{"sum":2}');
    expect(await calls()).to.deep.equal(['add 1 1']);
  });

  it('a high-risk tool waits for the approval gate and runs once approved over HTTP', async () => {
    const service = await start({ AGENTIC_APPROVAL_PROVIDER: 'http' });
    const events: WorkflowEvent[] = [];
    let notify: (() => void) | undefined;
    const off = service.runtime.subscribe((event) => {
      events.push(event);
      notify?.();
    });
    try {
      const { record } = await run(
        service,
        'mcp_approval',
        scripted(
          'mcp_approval',
          ['mcp:remote:write_note'],
          [[{ tool: 'mcp:remote:write_note', args: { text: 'hello' } }]],
        ),
      );
      while (!events.some((event) => event.type === 'approval_required')) {
        await new Promise<void>((resolve) => (notify = resolve));
      }
      const required = events.find(
        (event): event is Extract<WorkflowEvent, { type: 'approval_required' }> =>
          event.type === 'approval_required',
      )!;
      expect(required).to.include({ step: 'agent', tool_name: 'mcp:remote:write_note' });
      expect(await calls()).to.deep.equal([]);
      const answer = await call(service.url, 'POST', `/api/approvals/${required.call_id}`, {
        decision: 'approve',
      });
      expect(answer.status, answer.text).to.equal(200);
      const done = await record;
      expect(done.status, done.error ?? '').to.equal('success');
      expect(results(done.steps[0]!.messages)[0]!.content).to.equal('noted: hello');
      expect(await calls()).to.deep.equal(['write_note hello']);
    } finally {
      off();
    }
  });

  it('a server that dies mid-call fails the call with an error naming the server and opens its breaker', async () => {
    const service = await start();
    const { record } = await run(
      service,
      'mcp_crash',
      scripted(
        'mcp_crash',
        ['mcp:local:crash', 'mcp:local:add'],
        [[{ tool: 'mcp:local:crash' }], [{ tool: 'mcp:local:add', args: { a: 1, b: 2 } }]],
      ),
    );
    const done = await record;
    expect(done.status, done.error ?? '').to.equal('success');
    const answers = results(done.steps[0]!.messages);
    expect(answers.map((m) => m.metadata.outcome)).to.deep.equal(['error', 'error']);
    expect(answers[0]!.content).to.contain(
      "tool mcp:local:crash: MCP server 'local': call to 'crash' failed: Connection closed",
    );
    // Breaker threshold 1: the next call is refused at once, without starting the server again.
    expect(answers[1]!.content).to.match(
      /tool mcp:local:add: MCP server 'local' is unavailable \(circuit open after repeated failures; last: .*Connection closed\); next trial in \d+ s/,
    );
    expect(await calls()).to.deep.equal([]);
    const tools = (await call(service.url, 'GET', '/api/tools')).body as ToolsResponse;
    expect(tools.servers.find((server) => server.name === 'local')).to.deep.include({
      state: 'down',
      tools: [],
    });
  });

  it('a slow tool fails at its time limit with an error naming the server', async () => {
    const service = await start();
    const { record } = await run(
      service,
      'mcp_slow',
      scripted('mcp_slow', ['mcp:remote:hang'], [[{ tool: 'mcp:remote:hang' }]]),
    );
    const done = await record;
    const answers = results(done.steps[0]!.messages);
    expect(answers[0]!.content).to.contain(
      "tool mcp:remote:hang: MCP server 'remote': tool 'hang' gave no answer within 1 s",
    );
  });

  it("a stdio server gets a minimal environment: its own variables and secrets, none of the service's", async () => {
    const service = await start({
      AGENTIC_SOME_SETTING: 'x',
      OPENAI_API_KEY: 'sk-never-0123456789',
    });
    const { record } = await run(
      service,
      'mcp_env',
      scripted('mcp_env', ['mcp:local:env'], [[{ tool: 'mcp:local:env' }]]),
    );
    const done = await record;
    const names = String(results(done.steps[0]!.messages)[0]!.content).split(',');
    expect(names).to.include.members(['PATH', 'MCP_TEST_CALLS_FILE', 'MCP_TEST_TOKEN']);
    expect(names.filter((name) => /AGENTIC|OPENAI|MCP_REMOTE|SECRET/.test(name))).to.deep.equal([]);
  });

  it('start-up is not blocked by servers that are down or never answer; they are down in /api/tools and fail the step naming the server', async () => {
    // A server that accepts connections and never answers.
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    hanging = { server, sockets };
    const silent = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const gone = `http://127.0.0.1:${await refusingPort()}/mcp`;
    const service = await start(
      {},
      `  silent:
    transport: http
    url: ${silent}
    connect_timeout_seconds: 1
  gone:
    transport: http
    url: ${gone}
  missing:
    transport: stdio
    command: /nonexistent/mcp-server
`,
    );
    const health = await call(service.url, 'GET', '/api/health');
    expect(health.status).to.equal(200);
    const tools = (await call(service.url, 'GET', '/api/tools')).body as ToolsResponse;
    const state = Object.fromEntries(tools.servers.map((s) => [s.name, s]));
    expect(state.local!.state).to.equal('connected');
    expect(state.silent).to.deep.include({
      state: 'down',
      error: "MCP server 'silent': no answer within 1 s while connecting",
      tools: [],
    });
    expect(state.gone!.state).to.equal('down');
    expect(state.gone!.error).to.match(/^MCP server 'gone': cannot connect: /);
    expect(state.missing!.state).to.equal('down');
    expect(state.missing!.error).to.match(/^MCP server 'missing': cannot connect: .*ENOENT/);
    const { record } = await run(
      service,
      'mcp_down',
      scripted('mcp_down', ['mcp:gone:add'], [[{ tool: 'mcp:gone:add', args: { a: 1, b: 1 } }]]),
    );
    const done = await record;
    expect(done.status).to.equal('failed');
    expect(done.steps[0]!.error).to.match(/^tool mcp:gone:add: MCP server 'gone' /);
  });

  it('a step naming a server that is not configured is refused when the workflow loads', async () => {
    const service = await start();
    await writeFile(
      join(service.workflowsDir, 'mcp_unknown.yaml'),
      scripted('mcp_unknown', ['mcp:nowhere:add'], []),
    );
    const res = await call(service.url, 'POST', '/api/run', { workflow: 'mcp_unknown' });
    expect(res.status).to.equal(422);
    expect(res.text).to.contain(
      "unknown MCP server 'nowhere' in 'mcp:nowhere:add'; servers are local, remote",
    );
  });
});

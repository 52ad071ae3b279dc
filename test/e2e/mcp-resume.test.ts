/**
 * An MCP tool call is journaled before its step completes (issue 28 point 1): the real service
 * (dist/) is killed (SIGKILL) while its step waits on a second MCP call, after a first one
 * answered; the run is resumed at the next start, its step runs again, and the first call is
 * answered from the journal, not made again. Real MCP servers written with the official SDK:
 * one over stdio (a child of the service), one over Streamable HTTP (in this process).
 */
import { expect } from 'chai';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import { startHttpMcpServer, type TestHttpMcpServer } from '../fixtures/mcp/http-server.js';
import { spawnService, until } from './service-process.js';

const WORKFLOW = `name: mcp_resume
steps:
  - name: agent
    agent: tier1_writer
    description: Add, then wait on the slow tool.
    tools: ["mcp:local:add", "mcp:remote:hang"]
    inputs:
      placeholder_tool_calls:
        - [{ tool: "mcp:local:add", args: { a: 1, b: 2 } }]
        - [{ tool: "mcp:remote:hang" }]
`;

async function recordOf(runsDir: string, runId: string): Promise<RunRecord | undefined> {
  const name = (await readdir(runsDir)).find((n) => n.endsWith(`_${runId}.json`));
  if (name === undefined) return undefined;
  try {
    return JSON.parse(await readFile(join(runsDir, name), 'utf8')) as RunRecord;
  } catch {
    return undefined;
  }
}

describe('MCP tool calls across a kill and resume (real process)', function () {
  this.timeout(180_000);
  let root: string;
  let remote: TestHttpMcpServer | undefined;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-mcp-resume-'));
  });
  afterEach(async () => {
    await remote?.close();
    remote = undefined;
    await rm(root, { recursive: true, force: true });
  });

  it('a call answered before the kill is not made again when the resumed step asks for it', async () => {
    const callsFile = join(root, 'calls.txt');
    remote = await startHttpMcpServer({ callsFile });
    await mkdir(join(root, 'workflows'));
    await writeFile(join(root, 'workflows', 'mcp_resume.yaml'), WORKFLOW);
    const config = join(root, 'mcp.yaml');
    await writeFile(
      config,
      `servers:
  local:
    transport: stdio
    command: ${JSON.stringify(process.execPath)}
    args: [--import, tsx, ${JSON.stringify(join(packageRoot, 'test', 'fixtures', 'mcp', 'stdio-server.ts'))}]
    cwd: ${JSON.stringify(packageRoot)}
    connect_timeout_seconds: 60
    env: { MCP_TEST_CALLS_FILE: ${JSON.stringify(callsFile)} }
  remote:
    transport: http
    url: ${remote.url}
    timeout_seconds: 3
`,
    );
    const runsDir = join(root, 'runs');
    const env = {
      AGENTIC_PORT: '0',
      AGENTIC_HOST: '127.0.0.1',
      AGENTIC_RUNS_DIR: runsDir,
      AGENTIC_WORKFLOWS_DIR: join(root, 'workflows'),
      AGENTIC_NO_LLM: '1',
      AGENTIC_MCP_CONFIG: config,
      AGENTIC_RATE_LIMIT_DEFAULT: '100000/second',
      LOG_FORMAT: 'json',
    };
    const calls = async (): Promise<string[]> =>
      (await readFile(callsFile, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');
    let service = spawnService(env);
    try {
      const url = await service.listening;
      const answer = await fetch(`${url}/api/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'mcp_resume', run_id: 'mcp-resume-1' }),
      });
      expect(answer.status, await answer.text()).to.equal(200);
      // The second call has started: the first one's answer was journaled before it.
      await until('the slow call started', async () => (await calls()).includes('hang'), 90_000);
      service.child.kill('SIGKILL');
      await service.exit;
      const journal = await readFile(join(runsDir, '.tool-calls', 'mcp-resume-1.jsonl'), 'utf8');
      expect(journal.trim().split('\n')).to.have.length(1);

      service = spawnService(env);
      await service.listening;
      await until(
        'the resumed run ended',
        async () => {
          const r = await recordOf(runsDir, 'mcp-resume-1');
          return r !== undefined && r.status !== 'running' && r.status !== 'pending';
        },
        90_000,
      );
      const record = (await recordOf(runsDir, 'mcp-resume-1'))!;
      expect(record.status, record.error ?? '').to.equal('success');
      expect((record.extra as { resumes?: unknown[] }).resumes).to.have.length(1);
      // `add` ran once, before the kill; the resumed step got its answer from the journal.
      expect(await calls()).to.deep.equal(['add 1 2', 'hang', 'hang']);
      const results = record.steps[0]!.messages!.filter((m) => m.type === 'tool_result');
      expect(results.map((m) => m.content)).to.deep.equal([
        '{"sum":3}',
        JSON.stringify({
          error: "tool mcp:remote:hang: MCP server 'remote': tool 'hang' gave no answer within 3 s",
        }),
      ]);
      // The run ended: its journal is gone.
      expect(await readdir(join(runsDir, '.tool-calls'))).to.deep.equal([]);
    } finally {
      if (service.child.exitCode === null) service.child.kill('SIGKILL');
      await service.exit;
    }
  });
});

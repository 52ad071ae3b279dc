import { expect } from 'chai';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, startTestService, type TestService } from './harness.js';

const TOOLS_WORKFLOW = `name: tool_run
steps:
  - name: say
    agent: tier0_tool
    tools: [shell]
    inputs: { tool: shell, args: { argv: [echo, "a; rm -rf *", "$(id)"] } }
  - name: keep
    agent: tier0_tool
    tools: [memory_set]
    depends_on: [say]
    inputs: { tool: memory_set, args: { key: said, value: "\${steps.say.outputs.result.stdout}", shared: true } }
  - name: write
    agent: tier0_tool
    tools: [file_write]
    depends_on: [keep]
    inputs: { tool: file_write, args: { path: out.txt, content: x } }
`;

describe('tools in the HTTP service (AGENTIC_* tool variables)', () => {
  let svc: TestService;
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-tools-'));
    await mkdir(join(dir, 'files'));
    svc = await startTestService({
      env: {
        AGENTIC_FILE_BASE_DIR: join(dir, 'files'),
        AGENTIC_SHELL_ALLOWED_COMMANDS: 'echo',
        AGENTIC_APPROVAL_PROVIDER: 'policy',
        AGENTIC_APPROVAL_ALLOWED_TOOLS: 'tool_run:shell',
        AGENTIC_MEMORY_PATH: join(dir, 'memory.json'),
      },
    });
    await writeFile(join(svc.workflowsDir, 'tool_run.yaml'), TOOLS_WORKFLOW);
  });
  afterEach(async () => {
    await svc.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs approved tools, persists memory, and fails the step whose tool the policy denies', async () => {
    const res = await call(svc.url, 'POST', '/api/run', { workflow: 'tool_run' });
    expect(res.status, res.text).to.equal(200);
    const record = await svc.finished((res.body as { run_id: string }).run_id);
    expect(record.status).to.equal('failed');
    expect(record.steps.map((step) => [step.step_name, step.status])).to.deep.equal([
      ['say', 'success'],
      ['keep', 'success'],
      ['write', 'failed'],
    ]);
    expect(record.steps[0]!.output).to.deep.include({
      result: {
        exit_code: 0,
        signal: null,
        stdout: 'a; rm -rf * $(id)\n',
        stderr: '',
        truncated: false,
      },
    });
    expect(record.steps[2]!.error).to.match(
      /^tool file_write: denied: file_write is not in the approval policy/,
    );
    const memory = JSON.parse(await readFile(join(dir, 'memory.json'), 'utf8')) as unknown;
    expect(memory).to.deep.equal({ version: 1, entries: { 'shared/said': 'a; rm -rf * $(id)\n' } });
  });
});

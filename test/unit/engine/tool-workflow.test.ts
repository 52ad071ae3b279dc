import { expect } from 'chai';
import { mkdir, readFile, rm, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime } from '../../../src/engine/runtime.js';
import type { Runtime, RuntimeOptions } from '../../../src/engine/types.js';
import { ValidationError } from '../../../src/errors.js';

// A deterministic workflow that uses tools end to end through the runtime: write a file,
// read it back, remember it, and search memory, with no LLM.
const NOTES = `name: notes
steps:
  - name: write
    agent: tier0_tool
    tools: [file_write]
    inputs: { tool: file_write, args: { path: notes/today.txt, content: "buy milk" } }
  - name: read
    agent: tier0_tool
    depends_on: [write]
    tools: [file_read]
    inputs: { tool: file_read, args: { path: notes/today.txt } }
  - name: remember
    agent: tier0_tool
    depends_on: [read]
    tools: [memory_set]
    inputs: { tool: memory_set, args: { key: today, value: "\${steps.read.outputs.result.content}" } }
  - name: recall
    agent: tier0_tool
    depends_on: [remember]
    tools: [memory_search]
    inputs: { tool: memory_search, args: { query: milk } }
`;

describe('tier0_tool through the runtime', () => {
  let dir: string;
  let runtime: Runtime | undefined;
  const make = (options: RuntimeOptions = {}): Runtime =>
    (runtime = createRuntime({
      workflowsDir: join(dir, 'wf'),
      persist: false,
      noLlm: true,
      ...options,
    }));

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tool-wf-'));
    await mkdir(join(dir, 'wf'));
    await mkdir(join(dir, 'base'));
  });
  afterEach(async () => {
    await runtime?.shutdown({ graceMs: 1000 });
    runtime = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  for (const adapter of ['native', 'graph'] as const) {
    it(`a map item's tool call waiting for approval makes its map step awaiting_approval (${adapter})`, async () => {
      const rt = make({ tools: { fileBaseDir: join(dir, 'base') }, defaultAdapter: adapter });
      const asked: string[] = [];
      const bothAsked = new Promise<void>((resolve) => {
        const off = rt.subscribe((event) => {
          if (event.type !== 'approval_required') return;
          asked.push(event.call_id);
          if (asked.length < 2) return;
          off();
          resolve();
        });
      });
      const handle = await rt.start({
        workflow: `name: map_tools
steps:
  - name: save_each
    for_each: [a.txt, b.txt]
    max_concurrency: 2
    agent: tier0_tool
    tools: [file_write]
    inputs: { tool: file_write, args: { path: '\${item.value}', content: hi } }
`,
      });
      await bothAsked;
      const status = () =>
        rt.explain(handle.runId)?.facts.steps.find((step) => step.name === 'save_each')?.status;
      expect(status()).to.equal('awaiting_approval');
      // The step waits while any of its items does.
      rt.approvals.answer(asked[0]!, false);
      expect(status()).to.equal('awaiting_approval');
      rt.approvals.answer(asked[1]!, false);
      const done = await handle.done;
      expect(done.steps[0]!.status).to.equal('failed');
    });
  }

  it('runs a no-LLM workflow that writes, reads and remembers, with approval by policy', async () => {
    const rt = make({
      tools: {
        fileBaseDir: join(dir, 'base'),
        approval: 'policy',
        approvalAllowedTools: ['notes:file_write'],
        memoryPath: join(dir, 'memory.json'),
      },
    });
    const record = await rt.run({ workflow: NOTES });
    expect(record.status, record.error ?? '').to.equal('success');
    expect(record.steps.map((step) => step.output)).to.deep.equal([
      { result: { bytes: 8 } },
      { result: { content: 'buy milk', bytes: 8 } },
      { result: { stored: true } },
      { result: { results: [{ key: 'today', value: 'buy milk' }] } },
    ]);
    expect(await readFile(join(dir, 'base', 'notes', 'today.txt'), 'utf8')).to.equal('buy milk');
    await rt.shutdown({ graceMs: 1000 });
    const file = JSON.parse(await readFile(join(dir, 'memory.json'), 'utf8')) as unknown;
    expect(file).to.deep.equal({ version: 1, entries: { 'workflow:notes/today': 'buy milk' } });
  });

  it('fails the step when the high-risk tool is not approved (deny by default)', async () => {
    const rt = make({ tools: { fileBaseDir: join(dir, 'base') } });
    const record = await rt.run({ workflow: NOTES });
    expect(record.status).to.equal('failed');
    expect(record.steps[0]!.error).to.match(/tool file_write: denied/);
  });

  it('fails the step when the tool is not in its tools list (templated name)', async () => {
    const rt = make({ tools: { fileBaseDir: join(dir, 'base'), approval: 'auto' } });
    const wf = `name: sneaky
inputs: { which: { type: string, default: file_delete } }
steps:
  - name: s
    agent: tier0_tool
    tools: [file_read]
    inputs: { tool: "\${inputs.which}", args: { path: x } }
`;
    const record = await rt.run({ workflow: wf });
    expect(record.status).to.equal('failed');
    expect(record.steps[0]!.error).to.match(/tool file_delete: not allowed/);
  });

  it('refuses unknown tool names and unlisted literal tools at load', async () => {
    const rt = make();
    const bad = `name: bad
steps:
  - { name: a, agent: tier0_echo, tools: [rm_rf] }
  - { name: b, agent: tier0_tool, tools: [file_read], inputs: { tool: shell, args: {} } }
`;
    const error = await rt.run({ workflow: bad }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).to.be.instanceOf(ValidationError);
    expect(
      (error as ValidationError).details.map((detail) => [detail.loc, detail.type]),
    ).to.deep.equal([
      [['steps', 0, 'tools', 0], 'value_error.unknown_tool'],
      [['steps', 1, 'inputs', 'tool'], 'value_error.tool_not_listed'],
    ]);
  });
});

import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, startTestService, type TestService } from './harness.js';
import { sampleValue } from './metrics-scrape.js';

/** One scripted round of five calls, one of each outcome but success twice over two runs. */
const LOOP = `name: tool_mix
steps:
  - name: mix
    agent: tier1_writer
    tools: [file_write, file_delete, file_read]
    inputs:
      placeholder_tool_calls:
        - - { tool: file_write, args: { path: a.txt, content: one } }
          - { tool: file_delete, args: { path: a.txt } }
          - { tool: file_read, args: { path: missing.txt } }
          - { tool: shell, args: { argv: [ls] } }
          - { tool: no_such_tool, args: {} }
`;

const DIRECT = `name: tool_direct
steps:
  - name: write
    agent: tier0_tool
    tools: [file_write]
    inputs: { tool: file_write, args: { path: b.txt, content: two } }
`;

describe('GET /metrics: tool calls and approvals', () => {
  let svc: TestService | undefined;
  let dir: string;
  afterEach(async () => {
    await svc?.dispose();
    svc = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('counts tool calls by tool and outcome, and approvals by decision and provider, exactly', async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-tool-metrics-'));
    svc = await startTestService({
      env: {
        AGENTIC_METRICS: '1',
        AGENTIC_FILE_BASE_DIR: dir,
        AGENTIC_APPROVAL_PROVIDER: 'policy',
        AGENTIC_APPROVAL_ALLOWED_TOOLS: 'file_write',
      },
    });
    const s = svc;
    await writeFile(join(s.workflowsDir, 'tool_mix.yaml'), LOOP);
    await writeFile(join(s.workflowsDir, 'tool_direct.yaml'), DIRECT);
    for (const workflow of ['tool_mix', 'tool_direct']) {
      const res = await call(s.url, 'POST', '/api/run', { workflow });
      expect(res.status, res.text).to.equal(200);
      const record = await s.finished((res.body as { run_id: string }).run_id);
      expect(record.status, record.steps[0]?.error ?? '').to.equal('success');
    }
    const text = (await call(s.url, 'GET', '/metrics')).text;
    const tools = (tool: string, outcome: string) =>
      sampleValue(text, 'agentic_tool_calls_total', { tool, outcome });
    expect(tools('file_write', 'success')).to.equal(2);
    expect(tools('file_delete', 'denied')).to.equal(1);
    expect(tools('file_read', 'error')).to.equal(1);
    expect(tools('shell', 'refused')).to.equal(1);
    // A name the model made up is one bounded label, never the name itself.
    expect(tools('_unknown', 'refused')).to.equal(1);
    expect(text).to.not.contain('no_such_tool');
    const total = text
      .split('\n')
      .filter((line) => line.startsWith('agentic_tool_calls_total{'))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    expect(total).to.equal(6);

    const approvals = (decision: string) =>
      sampleValue(text, 'agentic_approvals_total', { decision, provider: 'policy' });
    expect(approvals('approve')).to.equal(2);
    expect(approvals('deny')).to.equal(1);
  });
});

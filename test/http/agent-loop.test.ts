import { expect } from 'chai';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowEvent } from '../../src/generated/events.js';
import { connectWs, type WsClient } from './events-fixtures.js';
import { call, startTestService, type TestService } from './harness.js';

/**
 * An LLM step with tools in no-LLM mode: the placeholder model is scripted to write a file, then
 * read it back, then answer.
 */
const WORKFLOW = `name: agent_files
steps:
  - name: scribe
    agent: tier1_writer
    description: Write the note, then read it back.
    tools: [file_write, file_read]
    inputs:
      topic: notes
      placeholder_tool_calls:
        - - { tool: file_write, args: { path: note.txt, content: "hello from the loop" } }
        - - { tool: file_read, args: { path: note.txt } }
`;

describe('agent loop of an LLM step with tools, end to end (scripted placeholder model)', () => {
  let svc: TestService | undefined;
  let dir: string;
  let ws: WsClient | undefined;

  afterEach(async () => {
    ws?.ws.close();
    if (ws !== undefined) await ws.closed;
    ws = undefined;
    await svc?.dispose();
    svc = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('writes with approval over HTTP, reads back, records every call and result, streams the events on WebSocket', async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-loop-'));
    svc = await startTestService({
      env: {
        AGENTIC_FILE_BASE_DIR: dir,
        AGENTIC_APPROVAL_PROVIDER: 'http',
        AGENTIC_DEFAULT_ADAPTER: 'graph',
      },
    });
    const service = svc;
    await writeFile(join(service.workflowsDir, 'agent_files.yaml'), WORKFLOW);

    // The served machine shows the state the step will be in while its write waits.
    const machine = await call(service.url, 'GET', '/api/workflows/agent_files/machine');
    expect(machine.status, machine.text).to.equal(200);
    expect(machine.text).to.contain('"awaiting_approval"');

    const res = await call(service.url, 'POST', '/api/run', { workflow: 'agent_files' });
    expect(res.status, res.text).to.equal(200);
    const runId = (res.body as { run_id: string }).run_id;
    const client = connectWs(`${service.url.replace(/^http/, 'ws')}/ws/execution/${runId}`);
    ws = client;
    await client.opened;
    const waiting = await client.events.until(
      (items) => items.some((event) => event.type === 'approval_required'),
      'approval_required',
    );
    const required = waiting.find((event) => event.type === 'approval_required')!;
    expect(required).to.include({ step: 'scribe', tool_name: 'file_write' });
    expect(await readFile(join(dir, 'note.txt')).catch(() => 'absent')).to.equal('absent');

    const answer = await call(service.url, 'POST', `/api/approvals/${required.call_id}`, {
      decision: 'approve',
    });
    expect(answer.status, answer.text).to.equal(200);
    const events = await client.events.until(
      (items) => items.some((event) => event.type === 'workflow_end'),
      'workflow_end',
    );
    const record = await service.finished(runId);
    expect(record.status, record.error ?? '').to.equal('success');
    expect(await readFile(join(dir, 'note.txt'), 'utf8')).to.equal('hello from the loop');

    const step = record.steps[0]!;
    expect(step.model_used).to.equal('placeholder');
    expect((step.output as { raw_response: string }).raw_response).to.match(/^\[placeholder tier1/);
    const messages = step.messages!;
    expect(messages.map((m) => `${m.type} ${m.sender}→${m.recipient}`)).to.deep.equal([
      'tool_call scribe→file_write',
      'tool_result file_write→scribe',
      'tool_call scribe→file_read',
      'tool_result file_read→scribe',
    ]);
    expect(messages[1]!.metadata).to.include({ round: 1, outcome: 'ok' });
    expect(JSON.parse(messages[3]!.content as string)).to.deep.include({
      content: 'hello from the loop',
    });
    // The recorded input is the resolved inputs, script included (the prompt leaves it out).
    expect(JSON.stringify(step.input)).to.contain('placeholder_tool_calls');

    // Events: the approval pair, then the step_end carrying the same messages.
    const types = events.map((event) => event.type);
    expect(types.indexOf('approval_required')).to.be.below(types.indexOf('approval_decision'));
    const end = events.find(
      (event): event is Extract<WorkflowEvent, { type: 'step_end' }> => event.type === 'step_end',
    )!;
    expect(end.messages).to.deep.equal(messages);
  });

  it('gives the model the denial as the tool result; the loop goes on and the step can still succeed', async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-loop-'));
    svc = await startTestService({
      env: { AGENTIC_FILE_BASE_DIR: dir, AGENTIC_APPROVAL_PROVIDER: 'deny' },
    });
    await writeFile(join(svc.workflowsDir, 'agent_files.yaml'), WORKFLOW);
    const res = await call(svc.url, 'POST', '/api/run', { workflow: 'agent_files' });
    const record = await svc.finished((res.body as { run_id: string }).run_id);
    expect(record.status).to.equal('success');
    const results = record.steps[0]!.messages!.filter((m) => m.type === 'tool_result');
    expect(results.map((m) => m.metadata.outcome)).to.deep.equal(['error', 'error']);
    expect(results[0]!.content).to.match(
      /tool file_write: denied: .*AGENTIC_APPROVAL_PROVIDER=deny/,
    );
    expect(results[1]!.content).to.match(/tool file_read: /);
    expect(await readFile(join(dir, 'note.txt')).catch(() => 'absent')).to.equal('absent');
  });

  it('fails the step at AGENTIC_AGENT_MAX_ROUNDS, keeping the calls made in the record', async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-loop-'));
    svc = await startTestService({
      env: {
        AGENTIC_FILE_BASE_DIR: dir,
        AGENTIC_APPROVAL_PROVIDER: 'auto',
        AGENTIC_AGENT_MAX_ROUNDS: '1',
      },
    });
    await writeFile(join(svc.workflowsDir, 'agent_files.yaml'), WORKFLOW);
    const res = await call(svc.url, 'POST', '/api/run', { workflow: 'agent_files' });
    const record = await svc.finished((res.body as { run_id: string }).run_id);
    expect(record.status).to.equal('failed');
    const step = record.steps[0]!;
    expect(step.error).to.equal(
      'agent loop: the model still called tools (file_read) after 1 rounds (AGENTIC_AGENT_MAX_ROUNDS)',
    );
    expect(step.messages!.map((m) => m.type)).to.deep.equal(['tool_call', 'tool_result']);
    expect(step.model_used).to.equal('placeholder');
    expect(await readFile(join(dir, 'note.txt'), 'utf8')).to.equal('hello from the loop');
  });
});

import { expect } from 'chai';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowEvent } from '../../src/generated/events.js';
import type { ApprovalsResponse } from '../../src/generated/api/approvals-response.js';
import { connectWs, openSse, type WsClient } from './events-fixtures.js';
import { call, startTestService, type TestService } from './harness.js';

const WORKFLOW = `name: approve_write
steps:
  - name: write
    agent: tier0_tool
    tools: [file_write]
    inputs: { tool: file_write, args: { path: out.txt, content: approved } }
`;

type Approval = Extract<WorkflowEvent, { type: 'approval_required' | 'approval_decision' }>;
const approvalsOf = (events: WorkflowEvent[]): Approval[] =>
  events.filter(
    (event): event is Approval =>
      event.type === 'approval_required' || event.type === 'approval_decision',
  );

describe('tool call approval over HTTP (AGENTIC_APPROVAL_PROVIDER=http)', () => {
  let svc: TestService | undefined;
  let dir: string;
  let ws: WsClient | undefined;

  async function start(env: Record<string, string>): Promise<TestService> {
    dir = await mkdtemp(join(tmpdir(), 'agentic-approval-'));
    svc = await startTestService({ env: { AGENTIC_FILE_BASE_DIR: dir, ...env } });
    await writeFile(join(svc.workflowsDir, 'approve_write.yaml'), WORKFLOW);
    return svc;
  }

  /** Starts the run and watches it over WebSocket until its tool call waits for approval. */
  async function runUntilApproval(
    service: TestService,
  ): Promise<{ runId: string; required: Approval; client: WsClient }> {
    const res = await call(service.url, 'POST', '/api/run', { workflow: 'approve_write' });
    expect(res.status, res.text).to.equal(200);
    const runId = (res.body as { run_id: string }).run_id;
    const client = connectWs(`${service.url.replace(/^http/, 'ws')}/ws/execution/${runId}`);
    ws = client;
    await client.opened;
    const events = await client.events.until(
      (items) => items.some((event) => event.type === 'approval_required'),
      'approval_required',
    );
    const required = approvalsOf(events)[0]!;
    return { runId, required, client };
  }

  afterEach(async () => {
    ws?.ws.close();
    if (ws !== undefined) await ws.closed;
    ws = undefined;
    await svc?.dispose();
    svc = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('lists the waiting call, approves it with POST, streams both events, and the tool runs', async () => {
    const service = await start({ AGENTIC_APPROVAL_PROVIDER: 'http' });
    const { runId, required, client } = await runUntilApproval(service);
    expect(required).to.include({
      type: 'approval_required',
      run_id: runId,
      step: 'write',
      tool_name: 'file_write',
    });
    expect(required.call_id).to.be.a('string').with.length.above(0);
    expect(required).to.not.have.property('arguments');

    const listed = await call(service.url, 'GET', '/api/approvals');
    expect(listed.status).to.equal(200);
    const body = listed.body as ApprovalsResponse;
    expect(body.provider).to.equal('http');
    expect(body.approvals).to.have.length(1);
    expect(body.approvals[0]).to.include({
      call_id: required.call_id,
      run_id: runId,
      workflow: 'approve_write',
      step: 'write',
      tool_name: 'file_write',
    });
    expect(body.approvals[0]).to.not.have.property('arguments');
    expect(await readFile(join(dir, 'out.txt')).catch(() => 'absent')).to.equal('absent');

    const bad = await call(service.url, 'POST', `/api/approvals/${required.call_id}`, {
      decision: 'maybe',
    });
    expect(bad.status).to.equal(422);
    const unknown = await call(service.url, 'POST', '/api/approvals/no-such-call', {
      decision: 'approve',
    });
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.have.property('detail');

    const ok = await call(service.url, 'POST', `/api/approvals/${required.call_id}`, {
      decision: 'approve',
      reason: 'looks fine',
    });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body).to.deep.equal({ call_id: required.call_id, decision: 'approve' });

    const events = await client.events.until(
      (items) => items.some((event) => event.type === 'workflow_end'),
      'workflow_end',
    );
    const decision = approvalsOf(events)[1]!;
    expect(decision).to.include({
      type: 'approval_decision',
      run_id: runId,
      step: 'write',
      tool_name: 'file_write',
      call_id: required.call_id,
      decision: 'approve',
      provider: 'http',
      reason: 'looks fine',
    });
    expect(decision.seq).to.be.above(required.seq);
    const record = await service.finished(runId);
    expect(record.status).to.equal('success');
    expect(await readFile(join(dir, 'out.txt'), 'utf8')).to.equal('approved');

    const again = await call(service.url, 'POST', `/api/approvals/${required.call_id}`, {
      decision: 'deny',
    });
    expect(again.status).to.equal(409);
    expect((await call(service.url, 'GET', '/api/approvals')).body).to.deep.equal({
      provider: 'http',
      approvals: [],
    });

    // The SSE stream of the same run carries the same two events.
    const sse = await openSse(`${service.url}/api/runs/${runId}/stream`);
    const streamed = approvalsOf(await sse.frames.done().then(() => sse.events()));
    expect(streamed).to.deep.equal(approvalsOf(events));
  });

  it('fails the step when the call is denied, with the reason, and writes nothing', async () => {
    const service = await start({ AGENTIC_APPROVAL_PROVIDER: 'http' });
    const { runId, required, client } = await runUntilApproval(service);
    const res = await call(service.url, 'POST', `/api/approvals/${required.call_id}`, {
      decision: 'deny',
      reason: 'not today',
    });
    expect(res.status).to.equal(200);
    const record = await service.finished(runId);
    expect(record.status).to.equal('failed');
    expect(record.steps[0]!.error).to.equal('tool file_write: denied: not today');
    const events = await client.events.until(
      (items) => items.some((event) => event.type === 'approval_decision'),
      'approval_decision',
    );
    expect(approvalsOf(events)[1]).to.include({ decision: 'deny', provider: 'http' });
    expect(await readFile(join(dir, 'out.txt')).catch(() => 'absent')).to.equal('absent');
  });

  it('denies a call nobody answers within AGENTIC_APPROVAL_TIMEOUT_SECONDS', async () => {
    const service = await start({
      AGENTIC_APPROVAL_PROVIDER: 'http',
      AGENTIC_APPROVAL_TIMEOUT_SECONDS: '0.2',
    });
    const { runId, required, client } = await runUntilApproval(service);
    expect(required).to.have.property('expires_at').that.is.a('string');
    const record = await service.finished(runId);
    expect(record.status).to.equal('failed');
    expect(record.steps[0]!.error).to.match(/^tool file_write: denied: no decision within 0\.2s/);
    const events = await client.events.until(
      (items) => items.some((event) => event.type === 'approval_decision'),
      'approval_decision',
    );
    expect(approvalsOf(events)[1]).to.include({ decision: 'deny', call_id: required.call_id });
    const late = await call(service.url, 'POST', `/api/approvals/${required.call_id}`, {
      decision: 'approve',
    });
    expect(late.status).to.equal(409);
    expect(await readFile(join(dir, 'out.txt')).catch(() => 'absent')).to.equal('absent');
  });

  it('stops waiting when the run is cancelled', async () => {
    const service = await start({ AGENTIC_APPROVAL_PROVIDER: 'http' });
    const { runId, required } = await runUntilApproval(service);
    const cancel = await call(service.url, 'POST', `/api/runs/${runId}/cancel`);
    expect(cancel.status).to.equal(200);
    const record = await service.finished(runId);
    expect(record.status).to.equal('failed');
    const listed = (await call(service.url, 'GET', '/api/approvals')).body as ApprovalsResponse;
    expect(listed.approvals).to.deep.equal([]);
    const late = await call(service.url, 'POST', `/api/approvals/${required.call_id}`, {
      decision: 'approve',
    });
    expect(late.status).to.equal(409);
    expect(await readFile(join(dir, 'out.txt')).catch(() => 'absent')).to.equal('absent');
  });

  it('refuses a path outside the base directory before asking anyone (no approval event, nothing listed)', async () => {
    // Were the call put to a person, nobody answers: it would end denied after a second.
    const service = await start({
      AGENTIC_APPROVAL_PROVIDER: 'http',
      AGENTIC_APPROVAL_TIMEOUT_SECONDS: '1',
    });
    const outside = join(tmpdir(), 'agentic-approval-outside.txt');
    for (const [name, path, reason] of [
      ['escape_parent', '../escape.txt', 'parent segment'],
      ['escape_absolute', outside, 'absolute path'],
    ] as const) {
      await writeFile(
        join(service.workflowsDir, `${name}.yaml`),
        `name: ${name}\nsteps:\n  - name: write\n    agent: tier0_tool\n    tools: [file_write]\n` +
          `    inputs: { tool: file_write, args: { path: ${JSON.stringify(path)}, content: x } }\n`,
      );
      const res = await call(service.url, 'POST', '/api/run', { workflow: name });
      expect(res.status, res.text).to.equal(200);
      const runId = (res.body as { run_id: string }).run_id;
      const record = await service.finished(runId);
      expect(record.status).to.equal('failed');
      expect(record.steps[0]!.error).to.equal(`tool file_write: path refused (${reason})`);
      const sse = await openSse(`${service.url}/api/runs/${runId}/stream`);
      await sse.frames.done();
      expect(sse.events().map((event) => event.type)).to.include('workflow_end');
      expect(approvalsOf(sse.events())).to.deep.equal([]);
      const listed = (await call(service.url, 'GET', '/api/approvals')).body as ApprovalsResponse;
      expect(listed).to.deep.equal({ provider: 'http', approvals: [] });
    }
    expect(await readFile(join(dir, '..', 'escape.txt')).catch(() => 'absent')).to.equal('absent');
    expect(await readFile(outside).catch(() => 'absent')).to.equal('absent');
  });

  it('emits approval events for the other providers too, with arguments when configured', async () => {
    const service = await start({
      AGENTIC_APPROVAL_PROVIDER: 'auto',
      AGENTIC_APPROVAL_EVENT_ARGUMENTS: '1',
    });
    const res = await call(service.url, 'POST', '/api/run', { workflow: 'approve_write' });
    const runId = (res.body as { run_id: string }).run_id;
    expect((await service.finished(runId)).status).to.equal('success');
    const sse = await openSse(`${service.url}/api/runs/${runId}/stream`);
    await sse.frames.done();
    const [required, decision] = approvalsOf(sse.events());
    expect(required).to.deep.include({
      type: 'approval_required',
      tool_name: 'file_write',
      arguments: { path: 'out.txt', content: 'approved' },
    });
    expect(decision).to.include({
      type: 'approval_decision',
      call_id: required!.call_id,
      decision: 'approve',
      provider: 'auto',
    });
    const listed = (await call(service.url, 'GET', '/api/approvals')).body as ApprovalsResponse;
    expect(listed).to.deep.equal({ provider: 'auto', approvals: [] });
    expect(await readFile(join(dir, 'out.txt'), 'utf8')).to.equal('approved');
  });
});

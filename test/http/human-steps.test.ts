/**
 * Human steps over HTTP (docs/workflow-format.md, "Human steps"): the question is listed by
 * `GET /api/approvals` with the tool calls (whatever the approval provider), explained by
 * `GET /api/runs/{id}/explain`, and answered with `POST /api/approvals/{call_id}`: a wrong answer
 * is a 422 naming what is wrong, a wrong id a 404, a second answer a 409; a good one ends the wait
 * and is the step's outputs. A real service on port 0, a real WebSocket client.
 */
import { expect } from 'chai';
import type { ApprovalsResponse } from '../../src/generated/api/approvals-response.js';
import type { RunExplanationResponse } from '../../src/generated/api/run-explanation-response.js';
import type { WorkflowEvent } from '../../src/generated/events.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connectWs, type WsClient } from './events-fixtures.js';
import { call, startTestService, type TestService } from './harness.js';

const WORKFLOW = `name: release_sign_off
inputs: { version: { type: string, default: '2.0' } }
steps:
  - { name: draft, agent: tier0_echo, inputs: { notes: 'notes of \${inputs.version}' } }
  - name: sign_off
    depends_on: [draft]
    human:
      prompt: 'Approve the release notes for \${inputs.version}?'
      schema:
        type: object
        required: [approved]
        additionalProperties: false
        properties: { approved: { type: boolean }, note: { type: string } }
  - { name: publish, agent: tier0_echo, depends_on: [sign_off], inputs: { ok: '\${steps.sign_off.outputs.approved}' } }
`;

describe('human steps over HTTP (GET/POST /api/approvals, explain)', function () {
  this.timeout(30_000);
  let svc: TestService | undefined;
  let ws: WsClient | undefined;

  afterEach(async () => {
    ws?.ws.close();
    if (ws !== undefined) await ws.closed;
    ws = undefined;
    await svc?.dispose();
    svc = undefined;
  });

  it('lists and explains the question; 422 for a wrong answer, 404 for a wrong id, 200 then 409', async () => {
    // The default approval provider (deny): questions are listed and answered all the same.
    svc = await startTestService();
    const service = svc;
    await writeFile(join(service.workflowsDir, 'release_sign_off.yaml'), WORKFLOW);
    const started = await call(service.url, 'POST', '/api/run', {
      workflow: 'release_sign_off',
      input_data: { version: '2.1' },
    });
    expect(started.status, started.text).to.equal(200);
    const runId = (started.body as { run_id: string }).run_id;
    const client = connectWs(`${service.url.replace(/^http/, 'ws')}/ws/execution/${runId}`);
    ws = client;
    await client.opened;
    const asked = await client.events.until(
      (items) => items.some((event) => event.type === 'approval_required'),
      'approval_required',
    );
    const required = asked.find((event) => event.type === 'approval_required')!;
    if (required.type !== 'approval_required') throw new Error('no question');
    const id = required.call_id;

    const listed = await call(service.url, 'GET', '/api/approvals');
    expect(listed.status).to.equal(200);
    const body = listed.body as ApprovalsResponse;
    expect(body.provider).to.equal('deny');
    expect(body.approvals).to.have.length(1);
    const entry = body.approvals[0]!;
    expect(entry).to.deep.include({
      call_id: id,
      run_id: runId,
      workflow: 'release_sign_off',
      step: 'sign_off',
      tool_name: 'human',
      kind: 'input',
      prompt: 'Approve the release notes for 2.1?',
    });
    expect(entry).to.not.have.property('expires_at');
    expect(entry.schema).to.include({ type: 'object' });

    const explained = await call(service.url, 'GET', `/api/runs/${runId}/explain`);
    expect(explained.status, explained.text).to.equal(200);
    const explanation = explained.body as RunExplanationResponse;
    const step = explanation.steps.find((s) => s.step === 'sign_off')!;
    expect(step.status).to.equal('awaiting_input');
    expect(step.waits[0]).to.deep.include({
      reason: 'input',
      call_id: id,
      prompt: 'Approve the release notes for 2.1?',
      since: new Date(Date.parse(entry.requested_at)).toISOString(),
    });
    expect(step.waits[0]!.message).to.include('Approve the release notes for 2.1?');
    expect(explanation.message).to.include('sign_off waits for an answer from a person');

    const post = (callId: string, payload: unknown) =>
      call(service.url, 'POST', `/api/approvals/${callId}`, payload);
    const wrongType = await post(id, { answer: { approved: 'yes' } });
    expect(wrongType.status).to.equal(422);
    expect(wrongType.body).to.deep.equal({
      detail: [
        { loc: ['body', 'answer'], msg: '/approved must be boolean', type: 'value_error.answer' },
      ],
    });
    const extra = await post(id, { answer: { approved: true, colour: 'red' } });
    expect(extra.status).to.equal(422);
    expect(JSON.stringify(extra.body)).to.include('must NOT have additional properties');
    const decision = await post(id, { decision: 'approve' });
    expect(decision.status).to.equal(422);
    expect(JSON.stringify(decision.body)).to.include("is a human step's question");
    const both = await post(id, { decision: 'approve', answer: { approved: true } });
    expect(both.status).to.equal(422);
    const notFound = await post('00000000-0000-5000-8000-000000000000', {
      answer: { approved: true },
    });
    expect(notFound.status).to.equal(404);
    expect(notFound.body).to.deep.equal({
      detail: 'No question waits for an answer with this id',
    });
    // Nothing changed: the question still waits.
    expect(
      ((await call(service.url, 'GET', '/api/approvals')).body as ApprovalsResponse).approvals,
    ).to.have.length(1);

    const answered = await post(id, { answer: { approved: true, note: 'fine' } });
    expect(answered.status, answered.text).to.equal(200);
    expect(answered.body).to.deep.equal({
      call_id: id,
      decision: 'approve',
      answer: { approved: true, note: 'fine' },
    });
    const again = await post(id, { answer: { approved: false } });
    expect(again.status).to.equal(409);
    expect(again.body).to.deep.equal({ detail: `question ${id} has already been answered` });

    const events: WorkflowEvent[] = await client.events.until(
      (items) => items.some((event) => event.type === 'workflow_end'),
      'workflow_end',
    );
    expect(events.find((e) => e.type === 'workflow_end')).to.include({ status: 'success' });
    const end = events.find((e) => e.type === 'step_end' && e.step === 'sign_off');
    expect(end).to.deep.include({ status: 'success', output: { approved: true, note: 'fine' } });
    const publish = events.find((e) => e.type === 'step_start' && e.step === 'publish');
    expect(publish).to.deep.include({ input: { ok: true } });
    expect(
      ((await call(service.url, 'GET', '/api/approvals')).body as ApprovalsResponse).approvals,
    ).to.deep.equal([]);
  });

  it('refuses at load a human step whose schema is not a valid JSON Schema, naming the key', async () => {
    svc = await startTestService();
    const res = await call(svc.url, 'POST', '/api/workflows/validate', {
      yaml_text: `name: bad_human
steps:
  - name: ask
    model: gpt-4o
    human: { prompt: 'Go \${inputs.nope', schema: { type: object, properties: { a: { type: 12 } } } }
`,
    });
    expect(res.status, res.text).to.equal(422);
    const errors = (res.body as { detail: { loc: unknown[]; msg: string }[] }).detail;
    expect(errors.map((e) => [e.loc.join('.'), e.msg.split(':')[0]])).to.deep.equal([
      ['steps.0.human.prompt', 'invalid expression in human.prompt'],
      ['steps.0.human.schema', 'invalid JSON Schema'],
      ['steps.0.model', 'model is not for a human step (a person is not a model)'],
    ]);
    const schemaError = errors.find((e) => e.loc.join('.') === 'steps.0.human.schema')!;
    expect(schemaError.msg).to.match(/^invalid JSON Schema: /);
  });
});

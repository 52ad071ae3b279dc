import { expect } from 'chai';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { WorkflowEvent } from '../../../src/engine/types.js';
import { createTerminalApprover, stepsNeedingApproval } from '../../../src/cli/run-approvals.js';
import type { PendingApproval } from '../../../src/tools/index.js';

const required = (callId: string, step: string): WorkflowEvent => ({
  type: 'approval_required',
  run_id: 'r1',
  timestamp: '2026-01-01T00:00:00.000Z',
  seq: 1,
  step,
  tool_name: 'file_write',
  call_id: callId,
  expires_at: '2026-01-01T00:05:00.000Z',
});

const decided = (callId: string, decision: 'approve' | 'deny', reason: string): WorkflowEvent => ({
  type: 'approval_decision',
  run_id: 'r1',
  timestamp: '2026-01-01T00:00:01.000Z',
  seq: 2,
  step: 'save',
  tool_name: 'file_write',
  call_id: callId,
  decision,
  provider: 'http',
  reason,
});

describe('createTerminalApprover (agentic run asking at its terminal)', () => {
  let input: PassThrough;
  let lines: string[];
  let answers: [string, boolean, string | undefined][];
  let responses: [string, unknown][];
  const pending: PendingApproval[] = [];
  beforeEach(() => {
    input = new PassThrough();
    lines = [];
    answers = [];
    responses = [];
  });

  const approver = () =>
    createTerminalApprover({
      approvals: {
        pending: () => pending,
        answer: (callId, approve, reason) => {
          answers.push([callId, approve, reason]);
          return 'decided';
        },
        respond: (callId, answer) => {
          responses.push([callId, answer]);
          return (answer as { ok?: unknown }).ok === true
            ? 'decided'
            : { invalid: '/ok must be boolean' };
        },
      },
      input,
      write: (line) => lines.push(line),
    });

  /** Types a line and waits until the approver has read it. */
  async function type(text: string): Promise<void> {
    const read = once(input, 'data');
    input.write(`${text}\n`);
    await read;
    await new Promise((resolve) => setImmediate(resolve));
  }

  it('asks one call at a time, in order; y approves, any other line denies', async () => {
    const asker = approver();
    asker.onEvent(required('c1', 'save'));
    asker.onEvent(required('c2', 'other'));
    expect(lines).to.deep.equal([
      '  ? save: file_write needs your approval (call c1)',
      '    denied at 2026-01-01T00:05:00.000Z without an answer (AGENTIC_APPROVAL_TIMEOUT_SECONDS)',
      '  approve? [y/N]',
    ]);
    await type('yes');
    expect(answers).to.deep.equal([['c1', true, 'approved at the terminal']]);
    await type('y');
    expect(answers, 'a line before the next question answers nothing').to.have.length(1);
    asker.onEvent(decided('c1', 'approve', 'approved at the terminal'));
    expect(lines.slice(3)).to.deep.equal([
      '    approved',
      '  ? other: file_write needs your approval (call c2)',
      '    denied at 2026-01-01T00:05:00.000Z without an answer (AGENTIC_APPROVAL_TIMEOUT_SECONDS)',
      '  approve? [y/N]',
    ]);
    await type('no thanks');
    expect(answers[1]).to.deep.equal(['c2', false, 'denied at the terminal']);
    asker.close();
  });

  it("asks a human step's question for a JSON object, again until it matches its schema", async () => {
    const asker = approver();
    asker.onEvent({
      type: 'approval_required',
      run_id: 'r1',
      timestamp: '2026-01-01T00:00:00.000Z',
      seq: 1,
      step: 'sign_off',
      tool_name: 'human',
      call_id: 'q1',
      expires_at: '2026-01-01T00:05:00.000Z',
      kind: 'input',
      prompt: 'Ship it?',
      schema: { type: 'object' },
    });
    expect(lines).to.deep.equal([
      '  ? sign_off: Ship it? (question q1)',
      '    answer with a JSON object matching: {"type":"object"}',
      '    times out at 2026-01-01T00:05:00.000Z',
    ]);
    await type('yes');
    expect(lines.at(-1)).to.equal('    not JSON: answer with a JSON object, on one line');
    await type('{"ok": "sure"}');
    expect(lines.at(-1)).to.equal('    /ok must be boolean: try again');
    await type('{"ok": true}');
    expect(responses).to.deep.equal([
      ['q1', { ok: 'sure' }],
      ['q1', { ok: true }],
    ]);
    expect(answers).to.deep.equal([]);
    asker.onEvent(decided('q1', 'approve', 'answered'));
    expect(lines.at(-1)).to.equal('    answered');
    asker.close();
  });

  it('says so when a call is decided without an answer, and moves on', () => {
    const asker = approver();
    asker.onEvent(required('c1', 'save'));
    asker.onEvent(required('c2', 'save'));
    asker.onEvent(decided('c2', 'deny', 'run cancelled while waiting for approval'));
    expect(lines.at(-1)).to.equal(
      '    file_write denied without your answer: run cancelled while waiting for approval',
    );
    asker.onEvent(decided('c1', 'deny', 'no decision within 300s (timed out)'));
    expect(lines.at(-1)).to.equal(
      '    file_write denied without your answer: no decision within 300s (timed out)',
    );
    expect(answers).to.deep.equal([]);
    asker.close();
  });

  it('finds the steps whose tools need an approval from the tool definitions', async () => {
    const steps = [
      { name: 'read', tools: ['file_read', 'memory_get'] },
      { name: 'act', tools: ['shell', 'file_read', 'http_post'] },
    ];
    expect(
      await stepsNeedingApproval({ steps } as unknown as Parameters<
        typeof stepsNeedingApproval
      >[0]),
    ).to.deep.equal([
      { step: 'act', tool: 'shell' },
      { step: 'act', tool: 'http_post' },
    ]);
  });
});

import { expect } from 'chai';
import {
  createHttpApprovalProvider,
  observeApprovals,
  type ApprovalDecision,
  type ApprovalRequest,
} from '../../../src/tools/index.js';

function request(callId: string, signal = new AbortController().signal): ApprovalRequest {
  return {
    callId,
    toolName: 'file_write',
    args: { path: 'a' },
    workflow: 'wf',
    step: 's',
    runId: 'r',
    signal,
  };
}

describe('tools: http approval provider', () => {
  it('holds a call until it is answered, then forgets it and answers 409-style after', async () => {
    const queue = createHttpApprovalProvider({ timeoutMs: 60_000, now: () => 1000 });
    const decision = queue.decide(request('c1'));
    expect(queue.pending()).to.deep.equal([
      {
        callId: 'c1',
        runId: 'r',
        workflow: 'wf',
        step: 's',
        toolName: 'file_write',
        args: { path: 'a' },
        requestedAt: 1000,
        expiresAt: 61_000,
      },
    ]);
    expect(queue.answer('c2', true)).to.equal('unknown');
    expect(queue.answer('c1', true, 'ok')).to.equal('decided');
    expect(await decision).to.deep.equal({ approved: true, reason: 'ok' });
    expect(queue.pending()).to.deep.equal([]);
    expect(queue.answer('c1', false)).to.equal('already_decided');
  });

  it('denies when the run is cancelled, and at once when it already was', async () => {
    const queue = createHttpApprovalProvider({ timeoutMs: 60_000 });
    const controller = new AbortController();
    const decision = queue.decide(request('c1', controller.signal));
    controller.abort();
    expect(await decision).to.deep.include({ approved: false });
    expect(queue.pending()).to.deep.equal([]);
    expect(await queue.decide(request('c2', controller.signal))).to.deep.include({
      approved: false,
    });
  });

  it('observes every question and answer, and denies when the provider throws', async () => {
    const seen: string[] = [];
    const provider = observeApprovals(
      {
        name: 'broken',
        decide: () => {
          throw new Error('boom');
        },
      },
      {
        required: (req) => seen.push(`required ${req.callId}`),
        decided: (req, decision: ApprovalDecision, name) =>
          seen.push(`decided ${req.callId} ${String(decision.approved)} ${name}`),
      },
    );
    const decision = await provider.decide(request('c1'));
    expect(decision.approved).to.equal(false);
    expect(decision.reason).to.equal('approval provider broken failed: boom');
    expect(seen).to.deep.equal(['required c1', 'decided c1 false broken']);
  });
});

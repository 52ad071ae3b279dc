import { expect } from 'chai';
import type { AttemptResult } from '../../../machines/engine-contract.js';
import { createStepExecutors, dispatchAttempts } from '../../../src/engine/step-executors.js';
import { createHumanInbox } from '../../../src/engine/kinds/human-inbox.js';
import { systemClock } from '../../../src/engine/system-clock.js';
import { compileWorkflow } from '../../../src/workflow/compile.js';
import { STEP_KIND_KEYS, kindKeyProblem } from '../../../src/workflow/step-kinds.js';
import { validateWorkflow } from '../../../src/workflow/validate.js';

describe('step kinds', () => {
  it('compiles an agent step as kind agent, its label the agent name', () => {
    const workflow = compileWorkflow({
      name: 'k',
      steps: [{ name: 'a', agent: 'tier2_reviewer' }],
    });
    expect(workflow.steps[0]).to.include({ kind: 'agent', agent: 'tier2_reviewer', tier: 2 });
  });

  it('refuses a step with no kind key at the first key, naming what is required', () => {
    expect(validateWorkflow({ name: 'k', steps: [{ name: 'a' }] })).to.deep.equal([
      {
        loc: ['steps', 0, STEP_KIND_KEYS[0]],
        msg:
          STEP_KIND_KEYS.length === 1
            ? 'agent is required'
            : `one of ${STEP_KIND_KEYS.join(', ')} is required (the step's kind)`,
        type: 'missing',
      },
    ]);
  });

  it('finds no problem with exactly one kind key', () => {
    expect(kindKeyProblem({ name: 'a', agent: 'tier0_echo' })).to.equal(undefined);
  });

  it("hands each attempt to its step kind's executor", async () => {
    const workflow = compileWorkflow({ name: 'k', steps: [{ name: 'a', agent: 'tier0_echo' }] });
    const seen: string[] = [];
    const executors = createStepExecutors({
      agent: {
        runId: 'r',
        clock: systemClock,
        agents: (name) => {
          seen.push(name);
          return (request) =>
            Promise.resolve({
              output: { echoed: request.input.x },
              modelUsed: null,
              tokensUsed: null,
            });
        },
      },
      human: {
        runId: 'r',
        workflow: 'k',
        inbox: createHumanInbox(),
        clock: systemClock,
        emit: () => undefined,
      },
    });
    const result: AttemptResult = await dispatchAttempts(executors)({
      step: workflow.steps[0]!,
      input: { x: 1 },
      scope: { inputs: {}, steps: {}, context: {} },
      attempt: 1,
      signal: new AbortController().signal,
    });
    expect(seen).to.deep.equal(['tier0_echo']);
    expect(result).to.include({ ok: true });
    expect(result.output).to.deep.equal({ echoed: 1 });
  });
});

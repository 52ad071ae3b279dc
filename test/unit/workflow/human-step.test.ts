import { expect } from 'chai';
import { compileWorkflow } from '../../../src/workflow/compile.js';
import { validateWorkflow } from '../../../src/workflow/validate.js';

const SCHEMA = { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } };

const withHuman = (human: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name: 'h',
  inputs: { version: { type: 'string', default: '1' } },
  steps: [
    { name: 'ask', human: { prompt: 'Go ${inputs.version}?', schema: SCHEMA, ...human }, ...extra },
  ],
});

const problems = (doc: unknown) =>
  validateWorkflow(doc).map((e) => [e.loc.join('.'), e.msg] as [string, string]);

describe('human steps at load (src/workflow/kinds/human.ts)', () => {
  it('compiles a human step: kind human, label human, one attempt, its input the rendered prompt', () => {
    const workflow = compileWorkflow(withHuman({ timeout_seconds: 60 }));
    const step = workflow.steps[0]!;
    expect(step).to.include({ kind: 'human', agent: 'human', tier: 0, maxAttempts: 1 });
    expect(step.inputs({ inputs: { version: '2.0' }, steps: {}, context: {} })).to.deep.equal({
      prompt: 'Go 2.0?',
    });
    expect(step.human).to.include({ timeoutSeconds: 60, onTimeout: 'fail' });
    expect(step.human!.check({ ok: true })).to.equal(undefined);
    expect(step.human!.check({ ok: 1 })).to.equal('/ok must be boolean');
  });

  it('refuses the keys of an agent call on a human step, each at its key, saying why', () => {
    expect(
      problems(
        withHuman(
          {},
          { tools: ['file_read'], max_attempts: 2, timeout_seconds: 5, inputs: { a: 1 } },
        ),
      ),
    ).to.deep.equal([
      ['steps.0.inputs', 'inputs is not for a human step (its input is its human.prompt)'],
      ['steps.0.max_attempts', 'max_attempts is not for a human step (it asks once)'],
      [
        'steps.0.timeout_seconds',
        'timeout_seconds is not for a human step (its wait is bounded by human.timeout_seconds)',
      ],
      ['steps.0.tools', 'tools is not for a human step (a person calls no tool)'],
    ]);
  });

  it('refuses a step with both agent and human', () => {
    const doc = withHuman({}, { agent: 'tier0_echo' });
    expect(problems(doc)).to.deep.equal([
      ['steps.0.human', 'a step has one kind: agent and human cannot both be set'],
    ]);
  });

  it('checks the timeout policy: default needs a default answer that matches, and a timeout', () => {
    expect(problems(withHuman({ on_timeout: 'default', timeout_seconds: 5 }))).to.deep.equal([
      [
        'steps.0.human.default',
        'on_timeout: default needs default (the answer taken when nobody answers in time)',
      ],
    ]);
    expect(
      problems(withHuman({ on_timeout: 'default', timeout_seconds: 5, default: { ok: 'no' } })),
    ).to.deep.equal([
      ['steps.0.human.default', 'default does not match the schema: /ok must be boolean'],
    ]);
    expect(problems(withHuman({ on_timeout: 'default', default: { ok: false } }))).to.deep.equal([
      [
        'steps.0.human.on_timeout',
        'on_timeout: default needs timeout_seconds (without one the step never times out)',
      ],
    ]);
    expect(problems(withHuman({ default: { ok: false } }))).to.deep.equal([
      ['steps.0.human.default', 'default is taken only with on_timeout: default'],
    ]);
    expect(
      problems(withHuman({ on_timeout: 'default', timeout_seconds: 5, default: { ok: false } })),
    ).to.deep.equal([]);
  });

  it('wants an object schema (the answer is the outputs) that compiles, and a prompt that parses', () => {
    expect(
      problems({
        name: 'h',
        steps: [
          { name: 'a', human: { prompt: 'x', schema: { type: 'string' } } },
          { name: 'b', human: { prompt: 'x', schema: { type: 'object', required: 'ok' } } },
          { name: 'c', human: { prompt: '${steps.zz.outputs.x}', schema: SCHEMA } },
        ],
      }).map(([loc, msg]) => [loc, msg.split(':')[0]]),
    ).to.deep.equal([
      ['steps.0.human.schema.type', "the answer becomes the step's outputs"],
      ['steps.1.human.schema', 'invalid JSON Schema'],
      ['steps.2.human.prompt', "references unknown step 'zz'"],
    ]);
  });

  it('refuses unknown keys in human: and a prompt or schema missing', () => {
    expect(
      problems({ name: 'h', steps: [{ name: 'a', human: { prompt: 'x', asks: 1 } }] }).map(
        ([loc]) => loc,
      ),
    ).to.deep.equal(['steps.0.human.asks', 'steps.0.human.schema']);
  });
});

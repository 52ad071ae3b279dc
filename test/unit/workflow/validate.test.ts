import { expect } from 'chai';
import fc from 'fast-check';
import type { ErrorDetail } from '../../../src/errors.js';
import { validateWorkflow } from '../../../src/workflow/validate.js';
import { STEP_KIND_KEYS } from '../../../src/workflow/step-kinds.js';

type Doc = Record<string, unknown>;

function step(name: string, extra: Doc = {}): Doc {
  return { name, agent: 'tier0_echo', ...extra };
}

function workflow(steps: Doc[], extra: Doc = {}): Doc {
  return { name: 'wf', description: 'test', steps, ...extra };
}

/** The one error of a document (fails when there are none or several). */
function only(doc: unknown, options = {}): ErrorDetail {
  const errors = validateWorkflow(doc, options);
  expect(errors, JSON.stringify(errors, null, 1)).to.have.length(1);
  return errors[0] as ErrorDetail;
}

describe('validateWorkflow', () => {
  it('accepts a complete valid workflow', () => {
    const doc = workflow(
      [
        step('a', {
          description: 'first',
          inputs: { text: '${inputs.text}' },
          outputs: { result: 'a_result' },
        }),
        step('b', {
          depends_on: ['a'],
          when: 'steps.a.status == "success" and context.a_result != null',
          inputs: { n: '${inputs.n}', nested: ['${steps.a.outputs.result}', { k: 'v' }] },
          tools: ['file_read'],
          model: 'some-model',
          max_attempts: 3,
          timeout_seconds: 1.5,
          loop_until: 'steps.b.outputs.done == true',
          loop_max: 5,
        }),
      ],
      {
        version: '1.0',
        inputs: {
          text: { type: 'string', description: 'd', required: true },
          n: { type: 'integer', default: 2, enum: [1, 2, 3] },
        },
        outputs: {
          out: { from: { r: '${steps.b.outputs.x}', a: '${context.a_result}' }, optional: true },
        },
        capabilities: { inputs: ['text'], outputs: ['out'] },
        evaluation: { enabled: false, rubric: 'default' },
      },
    );
    expect(validateWorkflow(doc, { expectedName: 'wf' })).to.deep.equal([]);
  });

  describe('schema', () => {
    it('rejects the document when it is not a mapping', () => {
      expect(only('steps: []')).to.deep.equal({
        loc: [],
        msg: 'a workflow must be a YAML mapping with name and steps, not a string',
        type: 'type_error',
      });
    });

    it('reports missing required keys with their path', () => {
      expect(validateWorkflow({ description: 'x' })).to.deep.equal([
        { loc: ['name'], msg: 'name is required', type: 'missing' },
        { loc: ['steps'], msg: 'steps is required', type: 'missing' },
      ]);
      expect(only(workflow([{ name: 'a' }]))).to.deep.equal({
        loc: ['steps', 0, 'agent'],
        msg: `one of ${STEP_KIND_KEYS.join(', ')} is required (the step's kind)`,
        type: 'missing',
      });
    });

    it('rejects unknown keys everywhere with their path', () => {
      const doc = workflow([step('a', { retries: 2 })], {
        extra: 1,
        inputs: { x: { type: 'string', min: 1 } },
        outputs: { o: { from: '${inputs.x}', form: 1 } },
        capabilities: { inputs: [], other: [] },
        evaluation: { rubric: 'r', bogus: true },
      });
      const errors = validateWorkflow(doc);
      expect(errors.map((e) => [e.loc, e.type])).to.deep.equal([
        [['capabilities', 'other'], 'extra_forbidden'],
        [['evaluation', 'bogus'], 'extra_forbidden'],
        [['extra'], 'extra_forbidden'],
        [['inputs', 'x', 'min'], 'extra_forbidden'],
        [['outputs', 'o', 'form'], 'extra_forbidden'],
        [['steps', 0, 'retries'], 'extra_forbidden'],
      ]);
      expect(errors[5]?.msg).to.match(
        /^unknown key 'retries' \(allowed: name, agent, (\w+, )*description, depends_on/,
      );
    });

    it('rejects depends_on given as a string', () => {
      expect(only(workflow([step('a'), step('b', { depends_on: 'a' })]))).to.deep.equal({
        loc: ['steps', 1, 'depends_on'],
        msg: 'depends_on must be a list of step names (e.g. [a]), not a string',
        type: 'type_error',
      });
    });

    it('checks the workflow name pattern', () => {
      expect(only(workflow([step('a')], { name: 'bad name!' }))).to.deep.include({
        loc: ['name'],
        type: 'value_error.pattern',
      });
    });

    it('checks agent names: the tierN_role form and the tier-0 list', () => {
      expect(only(workflow([step('a', { agent: 'reviewer' })]))).to.deep.equal({
        loc: ['steps', 0, 'agent'],
        msg: "agent 'reviewer' must be tier{0-5}_{role} with a lower-case role (e.g. tier2_reviewer)",
        type: 'value_error.pattern',
      });
      expect(only(workflow([step('a', { agent: 'tier6_x' })])).loc).to.deep.equal([
        'steps',
        0,
        'agent',
      ]);
      const unknown = only(workflow([step('a', { agent: 'tier0_magic' })]));
      expect(unknown.loc).to.deep.equal(['steps', 0, 'agent']);
      expect(unknown.type).to.equal('value_error.unknown_agent');
      expect(unknown.msg).to.contain(
        'tier0_echo, tier0_fail, tier0_sleep, tier0_process, tier0_counter, tier0_parser, tier0_tool',
      );
      expect(
        validateWorkflow(workflow([step('a', { agent: 'tier5_security_auditor' })])),
      ).to.deep.equal([]);
    });

    it('rejects an empty step list', () => {
      expect(only(workflow([]))).to.deep.equal({
        loc: ['steps'],
        msg: 'a workflow needs at least one step',
        type: 'value_error.list',
      });
    });

    it('checks numeric limits and value types', () => {
      const errors = validateWorkflow(
        workflow([
          step('a', {
            max_attempts: 0,
            timeout_seconds: 0,
            loop_until: 'true',
            loop_max: 1001,
            when: 5,
          }),
        ]),
      );
      expect(errors).to.deep.equal([
        {
          loc: ['steps', 0, 'loop_max'],
          msg: 'loop_max must be <= 1000, not 1001',
          type: 'value_error.number',
        },
        {
          loc: ['steps', 0, 'max_attempts'],
          msg: 'max_attempts must be >= 1, not 0',
          type: 'value_error.number',
        },
        {
          loc: ['steps', 0, 'timeout_seconds'],
          msg: 'timeout_seconds must be > 0, not 0',
          type: 'value_error.number',
        },
        {
          loc: ['steps', 0, 'when'],
          msg: 'when must be a string or true or false, not an integer',
          type: 'type_error',
        },
      ]);
    });

    it('names the input or output whose spec is not a mapping', () => {
      expect(
        validateWorkflow(
          workflow([step('a')], { inputs: { a: 'string' }, outputs: { o: '${inputs.a}' } }),
        ),
      ).to.deep.equal([
        {
          loc: ['inputs', 'a'],
          msg: "input 'a' must be a mapping, not a string",
          type: 'type_error',
        },
        {
          loc: ['outputs', 'o'],
          msg: "output 'o' must be a mapping, not a string",
          type: 'type_error',
        },
      ]);
    });

    it('rejects invalid input types and names', () => {
      const errors = validateWorkflow(
        workflow([step('a')], { inputs: { 'no spaces': { type: 'text' } } }),
      );
      expect(errors.map((e) => [e.loc, e.type])).to.deep.equal([
        [['inputs', 'no spaces'], 'value_error.key'],
        [['inputs', 'no spaces', 'type'], 'value_error.enum'],
      ]);
      expect(errors[1]?.msg).to.equal(
        'type must be one of "string", "integer", "number", "boolean", "object", "array", not "text"',
      );
    });
  });

  describe('step graph', () => {
    it('reports a duplicate step name at the second occurrence', () => {
      expect(only(workflow([step('a'), step('b'), step('a')]))).to.deep.equal({
        loc: ['steps', 2, 'name'],
        msg: "duplicate step name 'a' (already used by steps[0])",
        type: 'value_error.duplicate_step',
      });
    });

    it('reports an unknown dependency at its depends_on entry', () => {
      expect(only(workflow([step('a'), step('b', { depends_on: ['a', 'ghost'] })]))).to.deep.equal({
        loc: ['steps', 1, 'depends_on', 1],
        msg: "unknown dependency 'ghost': no step has that name",
        type: 'value_error.unknown_dependency',
      });
    });

    it('reports a self dependency', () => {
      expect(only(workflow([step('a', { depends_on: ['a'] })]))).to.deep.equal({
        loc: ['steps', 0, 'depends_on', 0],
        msg: "step 'a' depends on itself",
        type: 'value_error.self_dependency',
      });
    });

    it('reports a repeated dependency', () => {
      expect(only(workflow([step('a'), step('b', { depends_on: ['a', 'a'] })]))).to.deep.include({
        loc: ['steps', 1, 'depends_on', 1],
        type: 'value_error.duplicate_dependency',
      });
    });

    it('names a two-step cycle a → b → a at the entry that closes it', () => {
      expect(
        only(workflow([step('a', { depends_on: ['b'] }), step('b', { depends_on: ['a'] })])),
      ).to.deep.equal({
        loc: ['steps', 1, 'depends_on', 0],
        msg: 'dependency cycle: a → b → a',
        type: 'value_error.cycle',
      });
    });

    it('names a longer cycle once, with the steps outside it left alone', () => {
      const doc = workflow([
        step('start'),
        step('x', { depends_on: ['start', 'z'] }),
        step('y', { depends_on: ['x'] }),
        step('z', { depends_on: ['y'] }),
        step('end', { depends_on: ['z'] }),
      ]);
      expect(only(doc)).to.deep.equal({
        loc: ['steps', 2, 'depends_on', 0],
        msg: 'dependency cycle: x → z → y → x',
        type: 'value_error.cycle',
      });
    });

    it('reports two separate cycles', () => {
      const doc = workflow([
        step('a', { depends_on: ['b'] }),
        step('b', { depends_on: ['a'] }),
        step('c', { depends_on: ['d'] }),
        step('d', { depends_on: ['c'] }),
      ]);
      expect(validateWorkflow(doc).map((e) => e.msg)).to.deep.equal([
        'dependency cycle: a → b → a',
        'dependency cycle: c → d → c',
      ]);
    });

    it('handles a 5000-step chain without recursion limits', () => {
      const steps = Array.from({ length: 5000 }, (_, i) =>
        step(`s${i}`, i === 0 ? {} : { depends_on: [`s${i - 1}`] }),
      );
      expect(validateWorkflow(workflow(steps))).to.deep.equal([]);
      (steps[0] as Doc).depends_on = ['s4999'];
      const cycle = only(workflow(steps));
      expect(cycle.type).to.equal('value_error.cycle');
      expect(cycle.msg).to.match(/^dependency cycle: s0 → s4999 → s4998 → .* → s1 → s0$/);
    });
  });

  describe('expressions', () => {
    it('reports syntax errors in when, inputs, loop_until and outputs.from at their path', () => {
      const doc = workflow(
        [
          step('a', {
            when: 'inputs.x ==',
            inputs: { ok: 'text', bad: ['fine', { deep: '${inputs.x' }] },
            loop_until: 'inputs.x = 1',
          }),
        ],
        { outputs: { o: { from: { k: '${)}' } } } },
      );
      expect(validateWorkflow(doc)).to.deep.equal([
        {
          loc: ['outputs', 'o', 'from', 'k'],
          msg: "invalid expression in outputs: at position 2: expected a value, a path, a list or (, found ')'",
          type: 'value_error.expression',
        },
        {
          loc: ['steps', 0, 'inputs', 'bad', 1, 'deep'],
          msg: "invalid expression in inputs: at position 10: expected an operator or '}', found end of expression",
          type: 'value_error.expression',
        },
        {
          loc: ['steps', 0, 'loop_until'],
          msg: "invalid expression in loop_until: at position 9: expected an operand or operator ('==' compares), found '='",
          type: 'value_error.expression',
        },
        {
          loc: ['steps', 0, 'when'],
          msg: 'invalid expression in when: at position 11: expected a value, a path, a list or (, found end of expression',
          type: 'value_error.expression',
        },
      ]);
    });

    it('checks conditions written for the Python service like any expression', () => {
      const valid = workflow(
        [
          step('a', { outputs: { n: 'count' } }),
          step('b', { depends_on: ['a'], when: "${inputs.mode} == 'quick'" }),
          step('c', { depends_on: ['a'], when: "inputs.depth == 'quick'" }),
          step('d', {
            depends_on: ['a'],
            when: '${steps.a.outputs.n} > 3 and ${context.count} != null',
            loop_until: '${steps.d.outputs.done} == true',
          }),
          step('e', { when: false, loop_until: true }),
        ],
        { inputs: { mode: { type: 'string' }, depth: { type: 'string' } } },
      );
      expect(validateWorkflow(valid)).to.deep.equal([]);
      expect(
        validateWorkflow(
          workflow([
            step('a'),
            step('b', { when: '${steps.a.outputs.n} > 3' }),
            step('c', { when: "${steps.ghost.status} == 'success'" }),
            step('d', { when: "'${inputs.mode}' == 'quick'" }),
          ]),
        ),
      ).to.deep.equal([
        {
          loc: ['steps', 1, 'when'],
          msg: "references step 'a', which is not a dependency of 'b' (directly or indirectly), so its value would not be ready; add it to depends_on",
          type: 'value_error.step_reference',
        },
        {
          loc: ['steps', 2, 'when'],
          msg: "references unknown step 'ghost'",
          type: 'value_error.unknown_step_reference',
        },
        {
          loc: ['steps', 3, 'when'],
          msg: `invalid expression in when: at position 0: expected a placeholder without quotes (\${...} is a value here, not text), found string "\${inputs.mode}"`,
          type: 'value_error.expression',
        },
      ]);
    });

    it('rejects a reference to an unknown step', () => {
      expect(
        only(workflow([step('a', { when: 'steps.ghost.status == "success"' })])),
      ).to.deep.equal({
        loc: ['steps', 0, 'when'],
        msg: "references unknown step 'ghost'",
        type: 'value_error.unknown_step_reference',
      });
      expect(
        only(workflow([step('a')], { outputs: { o: { from: '${steps.ghost.outputs.x}' } } })),
      ).to.deep.include({
        loc: ['outputs', 'o', 'from'],
        type: 'value_error.unknown_step_reference',
      });
    });

    it('rejects a reference to a step that is not an ancestor', () => {
      const error = only(
        workflow([step('a'), step('b', { inputs: { x: '${steps.a.outputs.y}' } })]),
      );
      expect(error.loc).to.deep.equal(['steps', 1, 'inputs', 'x']);
      expect(error.type).to.equal('value_error.step_reference');
      expect(error.msg).to.equal(
        "references step 'a', which is not a dependency of 'b' (directly or indirectly), so its value would not be ready; add it to depends_on",
      );
    });

    it('accepts references to indirect ancestors', () => {
      const doc = workflow([
        step('a'),
        step('b', { depends_on: ['a'] }),
        step('c', { depends_on: ['b'], when: 'steps.a.outputs.x != null' }),
      ]);
      expect(validateWorkflow(doc)).to.deep.equal([]);
    });

    it('lets loop_until read its own step but not when or inputs', () => {
      expect(
        validateWorkflow(workflow([step('a', { loop_until: 'steps.a.outputs.done' })])),
      ).to.deep.equal([]);
      expect(only(workflow([step('a', { when: 'steps.a.outputs.done' })]))).to.deep.include({
        loc: ['steps', 0, 'when'],
        type: 'value_error.step_reference',
      });
    });

    it('checks context variables: written by some step, and by an ancestor', () => {
      expect(only(workflow([step('a', { inputs: { x: '${context.nobody}' } })]))).to.deep.equal({
        loc: ['steps', 0, 'inputs', 'x'],
        msg: "context.nobody is not written by any step's outputs",
        type: 'value_error.unknown_context_reference',
      });
      const notReady = only(
        workflow([step('a', { outputs: { r: 'v' } }), step('b', { when: 'context.v' })]),
      );
      expect(notReady.loc).to.deep.equal(['steps', 1, 'when']);
      expect(notReady.msg).to.match(/^context\.v is written by 'a', not a dependency of 'b'/);
    });
  });

  describe('loops and inputs', () => {
    it('requires loop_until with loop_max', () => {
      expect(only(workflow([step('a', { loop_max: 3 })]))).to.deep.equal({
        loc: ['steps', 0, 'loop_max'],
        msg: 'loop_max needs loop_until (the condition that ends the loop)',
        type: 'value_error.loop',
      });
    });

    it('checks input defaults against type and enum, and enum values against type', () => {
      const doc = workflow([step('a')], {
        inputs: {
          n: { type: 'integer', default: 1.5 },
          s: { type: 'string', enum: ['a', 'b'], default: 'c' },
          e: { type: 'number', enum: [1, 'two'] },
          o: { type: 'object', default: [] },
          ok: { type: 'array', default: [1], enum: [[1], [2]] },
        },
      });
      expect(validateWorkflow(doc)).to.deep.equal([
        {
          loc: ['inputs', 'e', 'enum', 1],
          msg: 'enum value "two" is a string, but the input type is a number',
          type: 'type_error',
        },
        {
          loc: ['inputs', 'n', 'default'],
          msg: 'default must be an integer, not a number',
          type: 'type_error',
        },
        {
          loc: ['inputs', 'o', 'default'],
          msg: 'default must be a mapping, not a list',
          type: 'type_error',
        },
        {
          loc: ['inputs', 's', 'default'],
          msg: 'default "c" is not one of "a", "b"',
          type: 'value_error.enum',
        },
      ]);
    });
  });

  it("checks a workflow's own rubric at load: weights that do not sum to 1 are an error", () => {
    const criteria = [
      { id: 'status', metric: 'status_success', weight: 0.3 },
      { id: 'completeness', metric: 'output_completeness', weight: 0.2 },
    ];
    expect(only(workflow([step('a')], { evaluation: { criteria } }))).to.deep.equal({
      loc: ['evaluation', 'criteria'],
      msg: 'criterion weights sum to 0.5; they must sum to 1 ± 0.01',
      type: 'value_error.rubric.weights',
    });
    criteria[0] = { id: 'status', metric: 'status_success', weight: 0.8 };
    expect(validateWorkflow(workflow([step('a')], { evaluation: { criteria } }))).to.deep.equal([]);
  });

  it('requires the expected name when given', () => {
    expect(only(workflow([step('a')]), { expectedName: 'other' })).to.deep.equal({
      loc: ['name'],
      msg: "name 'wf' must equal the file name 'other'",
      type: 'value_error.name_mismatch',
    });
  });

  it('reports schema and semantic problems together, sorted by location', () => {
    const doc = workflow(
      [step('a', { depends_on: ['ghost'], colour: 'red' }), step('a', { agent: 'tier0_x' })],
      {
        inputs: { n: { type: 'integer', default: 'x' } },
      },
    );
    expect(validateWorkflow(doc).map((e) => [e.loc, e.type])).to.deep.equal([
      [['inputs', 'n', 'default'], 'type_error'],
      [['steps', 0, 'colour'], 'extra_forbidden'],
      [['steps', 0, 'depends_on', 0], 'value_error.unknown_dependency'],
      [['steps', 1, 'agent'], 'value_error.unknown_agent'],
      [['steps', 1, 'name'], 'value_error.duplicate_step'],
    ]);
  });
});

describe('validateWorkflow (properties)', () => {
  const stepArb = fc.record(
    {
      name: fc.constantFrom('a', 'b', 'c', 'bad name', 5),
      agent: fc.constantFrom('tier0_echo', 'tier2_reviewer', 'tier0_nope', 'x', null),
      depends_on: fc.oneof(fc.array(fc.constantFrom('a', 'b', 'c', 'd', 1)), fc.constant('a')),
      when: fc.oneof(
        fc.constantFrom('steps.a.status == "success"', 'inputs.x ==', '${context.v}'),
        fc.string(),
      ),
      inputs: fc.oneof(
        fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.jsonValue({ maxDepth: 1 }))),
        fc.jsonValue({ maxDepth: 1 }),
      ),
      outputs: fc.dictionary(fc.constantFrom('r', 'x'), fc.constantFrom('v', 'w', 'bad var')),
      loop_max: fc.integer({ min: -1, max: 2000 }),
    },
    { requiredKeys: [] },
  );
  const docArb = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.record(
      {
        name: fc.constantFrom('wf', 'x y'),
        steps: fc.array(stepArb, { maxLength: 5 }),
        extra: fc.jsonValue({ maxDepth: 1 }),
      },
      { requiredKeys: ['name', 'steps'] },
    ),
  );

  it('never throws and reports each problem once, for arbitrary documents', () => {
    fc.assert(
      fc.property(docArb, (doc) => {
        const errors = validateWorkflow(doc);
        const keys = errors.map((e) => `${JSON.stringify(e.loc)}|${e.type}`);
        expect(new Set(keys).size).to.equal(keys.length);
        for (const error of errors) {
          expect(error.msg).to.be.a('string').and.not.equal('');
          expect(error.msg).to.not.match(/must NOT have|must match pattern|instancePath/);
        }
      }),
      { numRuns: 300 },
    );
  });
});

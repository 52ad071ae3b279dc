/**
 * Verification with corrections (`verify:`) on both engines, with tier-0 agents: `tier0_echo`
 * outputs its inputs, so a correction's `_verification_feedback` shows up in its output and
 * criteria can ask for it.
 */
import { expect } from 'chai';
import { createRuntime } from '../../src/engine/runtime.js';
import type { AdapterName, Runtime, WorkflowEvent } from '../../src/engine/types.js';
import { removeDir, runFiles, tempDir, validateEvent, validateRecord } from './helpers.js';

const ADAPTERS_UNDER_TEST: readonly AdapterName[] = ['native', 'graph'];

for (const adapter of ADAPTERS_UNDER_TEST) {
  describe(`verification conformance: ${adapter}`, () => {
    let runsDir: string;
    let runtime: Runtime | undefined;

    async function run(yaml: string) {
      runtime ??= createRuntime({ runsDir, noLlm: true, defaultAdapter: adapter });
      const handle = await runtime.start({ workflow: yaml });
      const events: WorkflowEvent[] = [];
      for await (const event of handle.events) events.push(event);
      const record = await handle.done;
      for (const event of events)
        expect(validateEvent(event), JSON.stringify(event)).to.equal(true);
      expect(validateRecord(record), JSON.stringify(validateRecord.errors)).to.equal(true);
      const files = await runFiles(runsDir);
      expect(files.at(-1)!.record).to.deep.equal(record);
      return record;
    }

    beforeEach(async () => {
      runsDir = await tempDir();
    });
    afterEach(async () => {
      await runtime?.shutdown({ graceMs: 1000 });
      runtime = undefined;
      await removeDir(runsDir);
    });

    it('records passed when the first output meets every criterion and the schema', async () => {
      const record = await run(`
name: verify_pass
steps:
  - name: draft
    agent: tier0_echo
    inputs: { text: hello }
    verify:
      criteria: { says_hello: "steps.draft.outputs.text == 'hello'" }
      schema: { type: object, required: [text], properties: { text: { type: string } } }
`);
      expect(record.status).to.equal('success');
      const step = record.steps[0]!;
      expect(step.output).to.deep.equal({ text: 'hello' });
      expect(step.verification).to.deep.include({
        status: 'passed',
        criteria_results: { says_hello: true, schema: true },
        corrections: [],
        final_output: { text: 'hello' },
        error: null,
      });
    });

    it('re-runs the step with the failures as inputs._verification_feedback until it passes', async () => {
      const record = await run(`
name: verify_fix
steps:
  - name: draft
    agent: tier0_echo
    inputs: { text: hello }
    verify:
      criteria:
        second_try: "steps.draft.outputs._verification_feedback.attempt == 2"
        says_hello: "steps.draft.outputs.text == 'hello'"
  - { name: after, agent: tier0_echo, depends_on: [draft], inputs: { got: '\${steps.draft.outputs.text}' } }
`);
      expect(record.status).to.equal('success');
      const step = record.steps[0]!;
      const verification = step.verification!;
      expect(verification.status).to.equal('corrected');
      expect(verification.criteria_results).to.deep.equal({ second_try: true, says_hello: true });
      expect(verification.corrections.map((c) => [c.attempt_number, c.outcome])).to.deep.equal([
        [1, 'failed'],
        [2, 'success'],
      ]);
      expect(verification.corrections[0]).to.deep.include({
        issues_resolved: [],
        issues_remaining: ['second_try'],
      });
      expect(verification.corrections[1]).to.deep.include({
        issues_resolved: ['second_try'],
        issues_remaining: [],
      });
      const feedback = (step.output as Record<string, unknown>)._verification_feedback;
      expect(feedback).to.deep.include({
        attempt: 2,
        max_attempts: 3,
        failed_criteria: ['second_try'],
      });
      expect(step.output).to.deep.equal(verification.final_output);
      expect(record.steps[1]!.output).to.deep.equal({ got: 'hello' });
    });

    it('fails the step as uncorrectable when the corrections run out, and skips its dependents', async () => {
      const record = await run(`
name: verify_never
steps:
  - name: draft
    agent: tier0_echo
    inputs: { text: hello }
    verify:
      criteria: { says_bye: "steps.draft.outputs.text == 'bye'" }
      max_correction_attempts: 2
  - { name: after, agent: tier0_echo, depends_on: [draft] }
`);
      expect(record.status).to.equal('failed');
      const step = record.steps[0]!;
      expect(step.status).to.equal('failed');
      expect(step.error).to.equal('verification failed: criterion says_bye is false');
      expect(step.verification).to.deep.include({
        status: 'uncorrectable',
        criteria_results: { says_bye: false },
      });
      expect(step.verification!.corrections.map((c) => c.outcome)).to.deep.equal([
        'failed',
        'failed',
      ]);
      expect(record.steps[1]!.status).to.equal('skipped');
    });

    it('stops at a critical criterion with halt_on_critical, and fails without corrections at 0', async () => {
      const halted = await run(`
name: verify_halt
steps:
  - name: draft
    agent: tier0_echo
    inputs: { text: hello }
    verify:
      criteria: { says_bye: "steps.draft.outputs.text == 'bye'" }
      critical: [says_bye]
      halt_on_critical: true
`);
      expect(halted.steps[0]!.verification).to.deep.include({
        status: 'uncorrectable',
        corrections: [],
        error: 'critical criteria failed: criterion says_bye is false',
      });
      const none = await run(`
name: verify_none
steps:
  - name: draft
    agent: tier0_echo
    inputs: { text: hello }
    verify:
      schema: { type: object, required: [summary] }
      max_correction_attempts: 0
`);
      expect(none.steps[0]!.status).to.equal('failed');
      expect(none.steps[0]!.verification).to.deep.include({ status: 'failed', corrections: [] });
      expect(none.steps[0]!.error).to.match(
        /^verification failed: outputs do not match verify\.schema/,
      );
    });

    it('fails the step when the corrections exceed verify.timeout_seconds, aborting the running one', async () => {
      const record = await run(`
name: verify_slow
steps:
  - name: draft
    agent: tier0_sleep
    inputs: { ms: 30 }
    verify:
      criteria: { never: "steps.draft.outputs.ms == 0" }
      max_correction_attempts: 10
      timeout_seconds: 0.05
`);
      const step = record.steps[0]!;
      expect(step.status).to.equal('failed');
      expect(step.error).to.equal('verification timed out after 0.05s');
      expect(step.verification).to.deep.include({ status: 'failed' });
      expect(step.verification!.corrections.length).to.be.within(1, 2);
    });

    it('passes on a majority when require_all_criteria is false', async () => {
      const record = await run(`
name: verify_majority
steps:
  - name: draft
    agent: tier0_echo
    inputs: { text: hello, n: 3 }
    verify:
      criteria:
        a: "steps.draft.outputs.text == 'hello'"
        b: "steps.draft.outputs.n == 3"
        c: "steps.draft.outputs.n == 4"
      require_all_criteria: false
`);
      expect(record.status).to.equal('success');
      expect(record.steps[0]!.verification).to.deep.include({
        status: 'passed',
        criteria_results: { a: true, b: true, c: false },
      });
    });
  });
}

describe('verify: checked at load', () => {
  it('reports bad criteria expressions, unknown critical criteria and invalid schemas', async () => {
    const runtime = createRuntime({ persist: false, noLlm: true });
    try {
      const result = await runtime.validate(`
name: verify_bad
steps:
  - name: draft
    agent: tier0_echo
    verify:
      criteria: { broken: "steps.draft.outputs.text ==" , other: "steps.nope.outputs.x == 1" }
      critical: [missing]
      schema: { type: not_a_type }
`);
      expect(result.valid).to.equal(false);
      const locs = result.errors.map((e) => e.loc.join('.'));
      expect(locs).to.include('steps.0.verify.criteria.broken');
      expect(locs).to.include('steps.0.verify.critical.0');
      expect(locs).to.include('steps.0.verify.schema');
      expect(locs.some((loc) => loc.startsWith('steps.0.verify.criteria.other'))).to.equal(true);
    } finally {
      await runtime.shutdown();
    }
  });
});

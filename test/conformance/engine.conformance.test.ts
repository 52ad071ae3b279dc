/**
 * One conformance suite for both engine adapters (ARCHITECTURE §6): the same workflows, the
 * same exact event sequences, the same run files.
 */
import { expect } from 'chai';
import type { Agent } from '../../src/agents/types.js';
import { createRuntime } from '../../src/engine/runtime.js';
import type {
  AdapterName,
  Runtime,
  RuntimeOptions,
  WorkflowEvent,
} from '../../src/engine/types.js';
import { ERROR_CODES, ValidationError } from '../../src/errors.js';
import type { CompiledWorkflow, InputType } from '../../src/workflow/types.js';
import {
  CLOCK_START,
  nextEvent,
  removeDir,
  runFiles,
  sequence,
  tempDir,
  validateEvent,
  validateRecord,
} from './helpers.js';
import { TestClock } from '../fixtures/test-clock.js';

const ADAPTERS_UNDER_TEST: readonly AdapterName[] = ['native', 'graph'];

/** Test agents (valid `tierN_role` names, so workflows using them validate). */
function testAgents(probe: { running: number; max: number }, flaky: Map<string, number>) {
  const agents: Record<string, Agent> = {
    // Holds for one macrotask so every step started in the same turn overlaps.
    tier1_probe: async ({ input }) => {
      probe.running++;
      probe.max = Math.max(probe.max, probe.running);
      await new Promise((resolve) => setImmediate(resolve));
      probe.running--;
      return {
        output: { ...input },
        modelUsed: 'probe',
        tokensUsed: { input: 1, output: 0, total: 1 },
      };
    },
    // Fails its first `inputs.failures` calls per run and step.
    tier1_flaky: ({ input, runId, step }) => {
      const key = `${runId}/${step.name}`;
      const calls = (flaky.get(key) ?? 0) + 1;
      flaky.set(key, calls);
      if (calls <= Number(input.failures))
        return Promise.reject(new Error(`flaky failure ${calls}`));
      return Promise.resolve({
        output: { calls },
        modelUsed: 'flaky',
        tokensUsed: { input: 2, output: 0, total: 2 },
      });
    },
    // Throws synchronously instead of rejecting.
    tier1_thrower: () => {
      throw new Error('agent exploded');
    },
    // Counts calls per run and step: {n}.
    tier1_counter: ({ runId, step }) => {
      const key = `count/${runId}/${step.name}`;
      const n = (flaky.get(key) ?? 0) + 1;
      flaky.set(key, n);
      return Promise.resolve({
        output: { n },
        modelUsed: 'counter',
        tokensUsed: { input: 1, output: 0, total: 1 },
      });
    },
  };
  return agents;
}

/** A value for each required input without a default (shipped workflows run without a form). */
function sampleInputs(workflow: CompiledWorkflow): Record<string, unknown> {
  const samples: Record<InputType, unknown> = {
    string: 'def add(a, b):\n    return a + b\n',
    integer: 1,
    number: 1.5,
    boolean: true,
    object: { key: 'value' },
    array: ['item'],
  };
  const input: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(workflow.inputs)) {
    if (spec.required !== true || spec.default !== undefined) continue;
    input[name] = spec.enum?.[0] ?? samples[spec.type];
  }
  return input;
}

/** An answer with every required property of an object `schema`, of its type. */
function sampleAnswer(schema: Record<string, unknown>): Record<string, unknown> {
  const samples: Record<string, unknown> = { boolean: true, string: 'ok', number: 1, integer: 1 };
  const properties = (schema.properties ?? {}) as Record<string, { type?: string }>;
  const answer: Record<string, unknown> = {};
  for (const name of (schema.required ?? []) as string[]) {
    answer[name] = samples[properties[name]?.type ?? 'string'] ?? null;
  }
  return answer;
}

for (const adapter of ADAPTERS_UNDER_TEST) {
  describe(`engine conformance: ${adapter}`, () => {
    let runsDir: string;
    let runtime: Runtime | undefined;
    const probe = { running: 0, max: 0 };
    const flaky = new Map<string, number>();

    function make(options: RuntimeOptions = {}): Runtime {
      runtime = createRuntime({
        runsDir,
        noLlm: true,
        defaultAdapter: adapter,
        retryBaseMs: 1,
        agents: testAgents(probe, flaky),
        ...options,
      });
      return runtime;
    }

    async function run(yaml: string, options: RuntimeOptions = {}, input = {}) {
      const rt = runtime ?? make(options);
      const handle = await rt.start({ workflow: yaml, input });
      const events: WorkflowEvent[] = [];
      for await (const event of handle.events) events.push(event);
      const record = await handle.done;
      for (const event of events)
        expect(validateEvent(event), JSON.stringify(event)).to.equal(true);
      expect(events.map((e) => e.seq)).to.deep.equal(events.map((_, i) => i));
      expect(validateRecord(record), JSON.stringify(validateRecord.errors)).to.equal(true);
      return { handle, events, record };
    }

    beforeEach(async () => {
      runsDir = await tempDir();
      probe.running = 0;
      probe.max = 0;
      flaky.clear();
    });

    afterEach(async () => {
      await runtime?.shutdown({ graceMs: 1000 });
      runtime = undefined;
      await removeDir(runsDir);
    });

    it('runs a chain in order, passing outputs along, and writes one run file', async () => {
      const { events, record } = await run(`
name: chain
inputs: { text: { type: string, default: '  padded  ' } }
outputs: { result: { from: '\${steps.c.outputs.count}' } }
steps:
  - { name: a, agent: tier0_echo, inputs: { text: '\${inputs.text}' } }
  - { name: b, agent: tier0_process, depends_on: [a], inputs: { text: '\${steps.a.outputs.text}' } }
  - { name: c, agent: tier0_counter, depends_on: [b], inputs: { text: '\${steps.b.outputs.result}' } }
`);
      expect(sequence(events)).to.deep.equal([
        'workflow_start',
        'step_start:a',
        'step_end:a',
        'step_start:b',
        'step_end:b',
        'step_start:c',
        'step_end:c',
        'workflow_end',
      ]);
      expect(record.status).to.equal('success');
      expect(record.final_output).to.deep.equal({ result: 6 });
      expect(record.success_rate).to.equal(100);
      expect(record.adapter).to.equal(adapter);
      // Tiers are strings on the wire and in run files: clients render `{tier && …}`.
      expect(record.steps.map((s) => s.tier)).to.deep.equal(['0', '0', '0']);
      const stepEvents = events.filter((e) => e.type === 'step_start' || e.type === 'step_end');
      expect(stepEvents.map((e) => e.tier)).to.deep.equal(['0', '0', '0', '0', '0', '0']);
      const files = await runFiles(runsDir);
      expect(files).to.have.length(1);
      expect(files[0]!.name).to.match(/^\d{8}T\d{9}Z_chain_[A-Za-z0-9_-]+\.json$/);
      expect(files[0]!.record).to.deep.equal(record);
      const end = events.at(-1)!;
      expect(end).to.include({ type: 'workflow_end', status: 'success', filename: files[0]!.name });
    });

    it('runs a diamond: the join starts only after both branches', async () => {
      const { events, record } = await run(`
name: diamond
steps:
  - { name: top, agent: tier0_echo, inputs: { v: 1 } }
  - { name: left, agent: tier0_echo, depends_on: [top], inputs: { v: 2 } }
  - { name: right, agent: tier0_echo, depends_on: [top], inputs: { v: 3 } }
  - name: join
    agent: tier0_echo
    depends_on: [left, right]
    inputs: { l: '\${steps.left.outputs.v}', r: '\${steps.right.outputs.v}' }
`);
      expect(sequence(events)).to.deep.equal([
        'workflow_start',
        'step_start:top',
        'step_end:top',
        'step_start:left',
        'step_start:right',
        'step_end:left',
        'step_end:right',
        'step_start:join',
        'step_end:join',
        'workflow_end',
      ]);
      expect(record.steps.map((s) => s.output)).to.deep.equal([
        { v: 1 },
        { v: 2 },
        { v: 3 },
        { l: 2, r: 3 },
      ]);
    });

    const fanOut = (width: number) =>
      [
        'name: fan',
        'steps:',
        '  - { name: root, agent: tier0_echo }',
        ...Array.from(
          { length: width },
          (_, i) =>
            `  - { name: w${i}, agent: tier1_probe, depends_on: [root], inputs: { i: ${i} } }`,
        ),
        `  - { name: join, agent: tier0_echo, depends_on: [${Array.from({ length: width }, (_, i) => `w${i}`).join(', ')}] }`,
      ].join('\n');

    it('runs a fan-out wider than the concurrency limit with at most the limit at once', async () => {
      const { events, record } = await run(fanOut(25), { maxConcurrency: 4 });
      expect(probe.max).to.equal(4);
      expect(record.status).to.equal('success');
      expect(events.filter((e) => e.type === 'step_end')).to.have.length(27);
      expect(sequence(events).at(-2)).to.equal('step_end:join');
    });

    it('runs a fan-out one step at a time with a limit of 1', async () => {
      const { events, record } = await run(fanOut(6), { maxConcurrency: 1 });
      expect(probe.max).to.equal(1);
      const workers = sequence(events).filter((s) => /:w\d$/.test(s));
      expect(workers).to.deep.equal(
        Array.from({ length: 6 }, (_, i) => [`step_start:w${i}`, `step_end:w${i}`]).flat(),
      );
      expect(record.status).to.equal('success');
    });

    it('skips transitive dependents of a failed step while an independent branch completes', async () => {
      const { events, record } = await run(`
name: failing
steps:
  - { name: bad, agent: tier0_fail, inputs: { message: boom } }
  - { name: child, agent: tier0_echo, depends_on: [bad] }
  - { name: grandchild, agent: tier0_echo, depends_on: [child] }
  - { name: other, agent: tier0_echo }
  - { name: other2, agent: tier0_echo, depends_on: [other] }
`);
      expect(sequence(events, true)).to.deep.equal([
        'workflow_start',
        'step_start:bad',
        'step_start:other',
        'step_error:bad=failed',
        'step_end:bad=failed',
        'step_end:child=skipped',
        'step_end:grandchild=skipped',
        'step_end:other=success',
        'step_start:other2',
        'step_end:other2=success',
        'workflow_end=failed',
      ]);
      expect(record.status).to.equal('failed');
      expect(record.error).to.equal("step 'bad' failed: boom");
      expect(record.failed_step_count).to.equal(1);
      expect(record.success_rate).to.equal(40);
      expect(record.steps[1]).to.include({ status: 'skipped', duration_ms: 0 });
      expect(record.steps[1]!.metadata).to.deep.include({ skip_reason: 'dependency failed: bad' });
      expect(record.steps[2]!.metadata).to.deep.include({ skip_reason: 'dependency failed: bad' });
      const childEnd = events.find((e) => e.type === 'step_end' && e.step === 'child');
      expect(childEnd).to.include({ skip_reason: 'dependency failed: bad', duration_ms: 0 });
    });

    it('runs a step whose when is true and skips one whose when is false; the skip counts as finished', async () => {
      const { events, record } = await run(
        `
name: conditional
inputs: { mode: { type: string, default: fast } }
steps:
  - { name: gate, agent: tier0_echo, inputs: { mode: '\${inputs.mode}' } }
  - { name: yes, agent: tier0_echo, depends_on: [gate], when: "\${steps.gate.outputs.mode == 'fast'}" }
  - { name: no, agent: tier0_echo, depends_on: [gate], when: "\${steps.gate.outputs.mode == 'slow'}" }
  - { name: after, agent: tier0_echo, depends_on: [no] }
`,
      );
      expect(sequence(events, true)).to.deep.equal([
        'workflow_start',
        'step_start:gate',
        'step_end:gate=success',
        'step_start:yes',
        'step_end:no=skipped',
        'step_start:after',
        'step_end:yes=success',
        'step_end:after=success',
        'workflow_end=success',
      ]);
      expect(record.status).to.equal('success');
      expect(record.steps[2]!.metadata).to.deep.include({ skip_reason: 'condition false' });
      expect(record.success_rate).to.equal(100);
    });

    it('runs conditions written for the Python service: placeholders as values, bare, YAML booleans', async () => {
      const { events, record } = await run(
        `
name: python_conditions
inputs:
  mode: { type: string, default: quick }
  depth: { type: string, default: deep }
  n: { type: integer, default: 1 }
steps:
  - { name: gate, agent: tier0_echo, inputs: { n: '\${inputs.n}' } }
  - { name: quick, agent: tier0_echo, depends_on: [gate], when: "\${inputs.mode} == 'quick'" }
  - { name: slow, agent: tier0_echo, depends_on: [gate], when: "\${inputs.mode} != 'quick'" }
  - { name: shallow, agent: tier0_echo, depends_on: [gate], when: "inputs.depth == 'quick'" }
  - { name: big, agent: tier0_echo, depends_on: [gate], when: "\${steps.gate.outputs.n} > 3 and \${inputs.mode} == 'quick'" }
  - { name: never, agent: tier0_echo, when: false }
  - { name: always, agent: tier0_echo, depends_on: [big], when: true }
`,
        {},
        // As a form sends them: the integer arrives as a string and is compared as a number.
        { n: '40', mode: 'quick' },
      );
      expect(record.status).to.equal('success');
      expect(record.inputs).to.deep.equal({ n: 40, mode: 'quick', depth: 'deep' });
      expect(record.steps.map((s) => [s.step_name, s.status])).to.deep.equal([
        ['gate', 'success'],
        ['quick', 'success'],
        ['slow', 'skipped'],
        ['shallow', 'skipped'],
        ['big', 'success'],
        ['never', 'skipped'],
        ['always', 'success'],
      ]);
      for (const index of [2, 3, 5]) {
        expect(record.steps[index]!.metadata).to.deep.include({ skip_reason: 'condition false' });
      }
      expect(sequence(events, true)).to.deep.equal([
        'workflow_start',
        'step_start:gate',
        'step_end:never=skipped',
        'step_end:gate=success',
        'step_start:quick',
        'step_end:slow=skipped',
        'step_end:shallow=skipped',
        'step_start:big',
        'step_end:quick=success',
        'step_end:big=success',
        'step_start:always',
        'step_end:always=success',
        'workflow_end=success',
      ]);
    });

    it('ends a loop on a loop_until with placeholders, seeing the previous output', async () => {
      const { record } = await run(`
name: python_loop
inputs: { limit: { type: integer, default: 3 } }
steps:
  - { name: count, agent: tier1_counter, loop_until: '\${steps.count.outputs.n} >= \${inputs.limit}', loop_max: 10 }
  - { name: once, agent: tier1_counter, loop_until: true }
`);
      expect(record.steps[0]!.output).to.deep.equal({ n: 3 });
      expect(record.steps[0]!.metadata).to.deep.include({ iterations: 3 });
      expect(record.steps[1]!.metadata).to.deep.include({ iterations: 1 });
    });

    it('resolves coalesce over a skipped branch to the branch that ran', async () => {
      const { record } = await run(`
name: coalesced
inputs: { fast: { type: boolean, default: false } }
outputs: { result: { from: '\${coalesce(steps.quick.outputs.result, steps.slow.outputs.result)}' } }
steps:
  - { name: quick, agent: tier0_process, when: '\${inputs.fast}', inputs: { text: ' quick ' } }
  - { name: slow, agent: tier0_process, when: '\${not inputs.fast}', inputs: { text: ' slow ' } }
`);
      expect(record.final_output).to.deep.equal({ result: 'slow' });
      expect(record.steps.map((s) => s.status)).to.deep.equal(['skipped', 'success']);
    });

    it('retries a failing step and succeeds, reporting each failed attempt as retrying', async () => {
      const { events, record } = await run(`
name: retried
steps:
  - { name: flaky, agent: tier1_flaky, max_attempts: 3, inputs: { failures: 2 } }
`);
      expect(sequence(events, true)).to.deep.equal([
        'workflow_start',
        'step_start:flaky',
        'step_error:flaky=retrying',
        'step_error:flaky=retrying',
        'step_end:flaky=success',
        'workflow_end=success',
      ]);
      const errors = events.filter((e) => e.type === 'step_error');
      expect(errors.map((e) => [e.attempt, e.error])).to.deep.equal([
        [1, 'flaky failure 1'],
        [2, 'flaky failure 2'],
      ]);
      expect(record.steps[0]).to.include({ status: 'success', retry_count: 2 });
      expect(record.steps[0]!.output).to.deep.equal({ calls: 3 });
      expect(record.steps[0]!.metadata).to.deep.include({ attempts: 3 });
    });

    it('fails a step when its retries are exhausted', async () => {
      const { events, record } = await run(`
name: exhausted
steps:
  - { name: bad, agent: tier0_fail, max_attempts: 2, inputs: { message: nope } }
`);
      expect(sequence(events, true)).to.deep.equal([
        'workflow_start',
        'step_start:bad',
        'step_error:bad=retrying',
        'step_error:bad=failed',
        'step_end:bad=failed',
        'workflow_end=failed',
      ]);
      expect(record.steps[0]).to.include({ status: 'failed', retry_count: 1, error: 'nope' });
    });

    it('uses the run-level max attempts when the step sets none', async () => {
      const rt = make({ maxAttempts: 3 });
      const handle = await rt.start({
        workflow:
          'name: runlevel\nsteps:\n  - { name: f, agent: tier1_flaky, inputs: { failures: 2 } }\n',
      });
      const record = await handle.done;
      expect(record.steps[0]).to.include({ status: 'success', retry_count: 2 });
    });

    it('fails a step that exceeds its timeout_seconds and skips its dependents', async () => {
      const clock = new TestClock(CLOCK_START);
      const rt = make({ clock });
      const started = nextEvent(
        (listener) => rt.subscribe(listener),
        (e) => e.type === 'step_start' && e.step === 'slow',
      );
      const handle = await rt.start({
        workflow: `
name: step_timeout
steps:
  - { name: slow, agent: tier0_sleep, timeout_seconds: 2, inputs: { ms: 60000 } }
  - { name: next, agent: tier0_echo, depends_on: [slow] }
`,
      });
      await started;
      clock.increment(2000);
      const record = await handle.done;
      expect(record.steps[0]).to.include({ status: 'failed', error: 'step timed out after 2s' });
      expect(record.steps[1]!.metadata).to.deep.include({ skip_reason: 'dependency failed: slow' });
      expect(record.status).to.equal('failed');
    });

    it('fails running steps with "run timed out" when the run timeout expires', async () => {
      const clock = new TestClock(CLOCK_START);
      const rt = make({ clock, timeoutMs: 5000 });
      const started = nextEvent(
        (listener) => rt.subscribe(listener),
        (e) => e.type === 'step_start' && e.step === 'slow',
      );
      const handle = await rt.start({
        workflow: `
name: run_timeout
steps:
  - { name: quick, agent: tier0_echo }
  - { name: slow, agent: tier0_sleep, depends_on: [quick], inputs: { ms: 60000 } }
  - { name: next, agent: tier0_echo, depends_on: [slow] }
`,
      });
      const events: WorkflowEvent[] = [];
      const collected = (async () => {
        for await (const event of handle.events) events.push(event);
      })();
      await started;
      clock.increment(5000);
      const record = await handle.done;
      await collected;
      expect(record.status).to.equal('failed');
      expect(record.error).to.equal('run timed out');
      expect(
        record.steps.map((s) => [s.status, s.error ?? s.metadata.skip_reason ?? null]),
      ).to.deep.equal([
        ['success', null],
        ['failed', 'run timed out'],
        ['skipped', 'dependency failed: slow'],
      ]);
      expect(sequence(events, true).slice(-4)).to.deep.equal([
        'step_error:slow=failed',
        'step_end:slow=failed',
        'step_end:next=skipped',
        'workflow_end=failed',
      ]);
      expect(clock.pending()).to.equal(0);
    });

    it('cancels a run mid-way: the running step fails, the rest are skipped', async () => {
      const rt = make();
      const started = nextEvent(
        (listener) => rt.subscribe(listener),
        (e) => e.type === 'step_start' && e.step === 'slow',
      );
      const handle = await rt.start({
        workflow: `
name: cancellable
steps:
  - { name: slow, agent: tier0_sleep, inputs: { ms: 60000 } }
  - { name: next, agent: tier0_echo, depends_on: [slow] }
`,
      });
      await started;
      expect(rt.isActive(handle.runId)).to.equal(true);
      expect(rt.cancel(handle.runId)).to.equal(true);
      const record = await handle.done;
      expect(record.status).to.equal('failed');
      expect(record.error).to.equal('cancelled');
      expect(record.steps.map((s) => s.status)).to.deep.equal(['failed', 'skipped']);
      expect(rt.isActive(handle.runId)).to.equal(false);
      expect(rt.cancel(handle.runId)).to.equal(false);
      const files = await runFiles(runsDir);
      expect(files.map((f) => f.record.status)).to.deep.equal(['failed']);
    });

    it('gives an agent that first reads its signal after a cancel a signal aborted with the reason', async () => {
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let reported: (seen: { aborted: boolean; reason: unknown }) => void = () => undefined;
      const seen = new Promise<{ aborted: boolean; reason: unknown }>((r) => (reported = r));
      const late: Agent = async (request) => {
        await gate;
        reported({ aborted: request.signal.aborted, reason: request.signal.reason });
        return { output: {}, modelUsed: null, tokensUsed: null };
      };
      const rt = make({ agents: { ...testAgents(probe, flaky), tier1_late: late } });
      const started = nextEvent(
        (listener) => rt.subscribe(listener),
        (e) => e.type === 'step_start' && e.step === 'late',
      );
      const handle = await rt.start({
        workflow: `
name: late-reader
steps:
  - { name: late, agent: tier1_late }
`,
      });
      await started;
      expect(rt.cancel(handle.runId, 'stop now')).to.equal(true);
      const record = await handle.done;
      expect(record.steps.map((s) => [s.status, s.error])).to.deep.equal([['failed', 'stop now']]);
      release();
      const { aborted, reason } = await seen;
      expect(aborted).to.equal(true);
      expect(reason).to.be.instanceOf(Error);
      expect((reason as Error).message).to.equal('stop now');
    });

    it('repeats a loop_until step, seeing its previous output, and reports each iteration', async () => {
      const { events, record } = await run(`
name: looping
steps:
  - { name: count, agent: tier1_counter, loop_until: '\${steps.count.outputs.n >= 3}', loop_max: 5 }
`);
      expect(sequence(events)).to.deep.equal([
        'workflow_start',
        'step_start:count',
        'step_complete:count',
        'step_complete:count',
        'step_end:count',
        'workflow_end',
      ]);
      const iterations = events.filter((e) => e.type === 'step_complete');
      expect(iterations.map((e) => [e.iteration, e.output])).to.deep.equal([
        [1, { n: 1 }],
        [2, { n: 2 }],
      ]);
      expect(record.steps[0]!.output).to.deep.equal({ n: 3 });
      expect(record.steps[0]!.metadata).to.deep.include({ iterations: 3 });
    });

    it('stops a loop at loop_max', async () => {
      const { record } = await run(`
name: capped
steps:
  - { name: count, agent: tier1_counter, loop_until: '\${steps.count.outputs.n >= 100}', loop_max: 4 }
`);
      expect(record.steps[0]!.output).to.deep.equal({ n: 4 });
    });

    it('checks inputs before the run starts: default, enum and required errors', async () => {
      const rt = make();
      const yaml = `
name: typed
inputs:
  level: { type: string, enum: [low, high], default: low }
  name: { type: string, required: true }
outputs: { level: { from: '\${steps.s.outputs.level}' } }
steps:
  - { name: s, agent: tier0_echo, inputs: { level: '\${inputs.level}' } }
`;
      const record = await rt.run({ workflow: yaml, input: { name: 'x' } });
      expect(record.inputs).to.deep.equal({ name: 'x', level: 'low' });
      expect(record.final_output).to.deep.equal({ level: 'low' });
      const error = await rt.start({ workflow: yaml, input: { level: 'mid' } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(ValidationError);
      const details = (error as ValidationError).details;
      expect(details.map((d) => d.loc)).to.deep.equal([
        ['input', 'level'],
        ['input', 'name'],
      ]);
      expect((error as ValidationError).code).to.equal(ERROR_CODES.INPUT_INVALID);
      expect(rt.activeRuns()).to.deep.equal([]);
      expect(await runFiles(runsDir)).to.have.length(1);
    });

    it('rejects a cyclic workflow at validation, naming the cycle', async () => {
      const rt = make();
      const yaml = `
name: cyclic
steps:
  - { name: a, agent: tier0_echo, depends_on: [b] }
  - { name: b, agent: tier0_echo, depends_on: [a] }
`;
      const result = await rt.validate(yaml);
      expect(result.valid).to.equal(false);
      expect(result.errors.map((e) => e.msg).join('\n')).to.match(/a → b → a|b → a → b/);
      const error = await rt.start({ workflow: yaml }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(ValidationError);
      expect(await runFiles(runsDir)).to.have.length(0);
    });

    it('turns an agent that throws into a failed step with step_end and workflow_end', async () => {
      const { events, record } = await run(`
name: throwing
steps:
  - { name: boom, agent: tier1_thrower }
  - { name: after, agent: tier0_echo, depends_on: [boom] }
`);
      expect(sequence(events, true)).to.deep.equal([
        'workflow_start',
        'step_start:boom',
        'step_error:boom=failed',
        'step_end:boom=failed',
        'step_end:after=skipped',
        'workflow_end=failed',
      ]);
      expect(record.steps[0]!.error).to.equal('agent exploded');
    });

    it('fails an LLM step without a provider, naming what to configure', async () => {
      const { record } = await run(
        'name: llm\nsteps:\n  - { name: ask, agent: tier2_reviewer }\n',
        {
          noLlm: false,
        },
      );
      expect(record.status).to.equal('failed');
      expect(record.steps[0]!.error).to.match(/AGENTIC_NO_LLM=1/);
    });

    it('runs every shipped workflow end to end in no-LLM mode with non-null declared outputs', async () => {
      const rt = make({ persist: false });
      // A human step's question (human_review) is answered as a person would, from its schema.
      rt.subscribe((event) => {
        if (event.type === 'approval_required' && event.kind === 'input')
          rt.approvals.respond(event.call_id, sampleAnswer(event.schema ?? {}));
      });
      const names = await rt.listWorkflows();
      expect(names.length).to.be.at.least(4);
      for (const name of names) {
        const workflow = await rt.getWorkflow(name);
        const record = await rt.run({ workflow: name, input: sampleInputs(workflow) });
        expect(record.status, `${name}: ${record.error}`).to.equal('success');
        for (const output of workflow.outputNames) {
          if (workflow.optionalOutputs.includes(output)) continue;
          expect(record.final_output?.[output], `${name}.${output}`).to.not.equal(null);
          expect(record.final_output?.[output], `${name}.${output}`).to.not.equal(undefined);
        }
      }
    });
  });
}

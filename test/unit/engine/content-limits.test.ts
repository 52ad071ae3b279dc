import { expect } from 'chai';
import { resolveRuntimeOptions } from '../../../src/engine/runtime-options.js';
import { createRuntime } from '../../../src/engine/runtime.js';
import type { Runtime, RuntimeOptions } from '../../../src/engine/types.js';
import { AppError } from '../../../src/errors.js';
import { createLogger } from '../../../src/log.js';
import { logLines } from '../../support/log-lines.js';
import type { Agent } from '../../../src/agents/types.js';
import { isTruncationMarker } from '../../../src/workflow/size-bounds.js';

/** An agent answering `{ text }` of `inputs.size` characters. */
const bigOutput: Agent = (request) =>
  Promise.resolve({
    output: { text: 'z'.repeat(Number(request.input.size)), note: 'kept' },
    modelUsed: null,
    tokensUsed: null,
  });

describe('runtime content limits', () => {
  let runtime: Runtime | undefined;
  const make = (options: RuntimeOptions) =>
    (runtime = createRuntime({ persist: false, defaultAdapter: 'native', ...options }));
  afterEach(async () => {
    await runtime?.shutdown({ graceMs: 1000 });
    runtime = undefined;
  });

  it('fails a step whose inputs render past the template bound, naming the variable', async () => {
    const rt = make({ limits: { maxTemplateBytes: 2048 } });
    const handle = await rt.start({
      workflow: {
        name: 'w',
        inputs: { t: { type: 'string' } },
        steps: [{ name: 'a', agent: 'tier0_echo', inputs: { x: '${inputs.t}'.repeat(100) } }],
      },
      input: { t: 'y'.repeat(100) },
    });
    const record = await handle.done;
    expect(record.status).to.equal('failed');
    expect(record.steps[0]).to.include({
      status: 'failed',
      error: 'inputs: rendered template exceeds 2048 bytes (AGENTIC_MAX_TEMPLATE_BYTES)',
    });
  });

  it('fails a step whose when overflows the stack instead of skipping it as false', async () => {
    const deep = (): unknown => {
      let value: unknown = 1;
      for (let i = 0; i < 200_000; i++) value = { a: value };
      return value;
    };
    const rt = make({});
    const handle = await rt.start({
      workflow: {
        name: 'w',
        inputs: { d: { type: 'object' }, e: { type: 'object' } },
        steps: [{ name: 'a', agent: 'tier0_echo', when: '${inputs.d != inputs.e}' }],
      },
      input: { d: deep(), e: deep() },
    });
    const record = await handle.done;
    expect(record.steps[0]?.status).to.equal('failed');
    expect(record.steps[0]?.error).to.match(/^when: expression evaluation failed: Maximum call/);
  });

  it('truncates an agent output over the step bound with a marker, warns in the record and the log', async () => {
    const { stream, lines } = logLines();
    const rt = make({
      agents: { big_output: bigOutput },
      limits: { maxStepIoBytes: 4096 },
      logger: createLogger({ format: 'json', level: 'warn', destination: stream }),
    });
    const handle = await rt.start({
      workflow: {
        name: 'w',
        steps: [{ name: 'a', agent: 'big_output', inputs: { size: 10_000 } }],
      },
    });
    const record = await handle.done;
    expect(record.status).to.equal('success');
    expect(record.steps[0]?.output).to.deep.equal({
      text: { __truncated__: true, bytes: 10_002, preview: 'z'.repeat(200) },
      note: 'kept',
    });
    const warnings = ['steps.a.output entries text truncated (AGENTIC_MAX_STEP_IO_BYTES)'];
    expect(record.extra).to.deep.equal({ warnings });
    expect(lines.find((line) => line.msg === 'run record truncated')).to.include({
      runId: record.run_id,
    });
  });

  it('keeps the run record within its bound: the biggest parts become markers, each listed', async () => {
    const rt = make({
      agents: { big_output: bigOutput },
      // The run's byte budget (which follows the record bound) is opened up: this is the record's.
      limits: { maxStepIoBytes: 200_000, maxRunRecordBytes: 300_000, maxRunBytes: 10_000_000 },
    });
    const steps = Array.from({ length: 5 }, (_, i) => ({
      name: `s${i}`,
      agent: 'big_output',
      inputs: { size: 100_000 },
    }));
    const handle = await rt.start({ workflow: { name: 'w', steps } });
    const record = await handle.done;
    expect(record.status).to.equal('success');
    expect(JSON.stringify(record).length).to.be.below(300_000);
    const truncated = record.steps.filter((step) => isTruncationMarker(step.output));
    expect(truncated).to.have.length(3);
    expect(record.extra.warnings).to.deep.equal(
      truncated.map(
        (step) =>
          `steps.${step.step_name}.output truncated: the run record exceeded 300000 bytes (AGENTIC_MAX_RUN_RECORD_BYTES)`,
      ),
    );
  });

  it('refuses limits that are not positive integers', () => {
    expect(() => resolveRuntimeOptions({ limits: { maxStepIoBytes: 0 } })).to.throw(
      AppError,
      'limits.maxStepIoBytes must be a positive integer',
    );
    expect(resolveRuntimeOptions({ limits: { maxTemplateBytes: 5000 } }).limits).to.deep.equal({
      maxYamlBytes: 1048576,
      maxExpandedYamlBytes: 4194304,
      maxTemplateBytes: 5000,
      maxStepIoBytes: 1048576,
      maxRunRecordBytes: 16777216,
      maxRunBytes: 16777216,
    });
  });
});

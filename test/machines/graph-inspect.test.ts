import { expect } from 'chai';
import { join } from 'node:path';
import type { AnyMachineSnapshot, InspectionEvent } from 'xstate';
import { createRuntime } from '../../src/engine/runtime.js';
import type { Runtime } from '../../src/engine/types.js';
import { removeDir, tempDir } from '../conformance/helpers.js';

const DIAMOND = [
  'name: diamond',
  'steps:',
  '  - { name: a, agent: tier0_echo, inputs: { v: 1 } }',
  '  - { name: b, agent: tier0_echo, depends_on: [a] }',
  '  - { name: c, agent: tier0_echo, depends_on: [a] }',
  '  - { name: d, agent: tier0_echo, depends_on: [b, c] }',
  '',
].join('\n');

describe('graph machine in the inspector', () => {
  let dir: string;
  let runtime: Runtime | undefined;
  beforeEach(async () => {
    dir = await tempDir('agentic-inspect-');
  });
  afterEach(async () => {
    await runtime?.shutdown({ graceMs: 1000 });
    runtime = undefined;
    await removeDir(dir);
  });

  it("shows each step's region go pending → running → success in a live run (plain inspect callback)", async () => {
    const seen: Record<string, string[]> = {};
    const inspect = (event: InspectionEvent) => {
      if (event.type !== '@xstate.snapshot') return;
      const snapshot = event.snapshot as Partial<AnyMachineSnapshot>;
      const regions = (snapshot.value as { running?: Record<string, string> } | undefined)?.running;
      if (snapshot.machine === undefined || typeof regions !== 'object') return;
      // Read when notified: the runtime updates the regions in place.
      for (const [step, state] of Object.entries(regions)) {
        const states = (seen[step] ??= []);
        if (states.at(-1) !== state) states.push(state);
      }
    };
    runtime = createRuntime({
      runsDir: join(dir, 'runs'),
      workflowsDir: join(dir, 'wf'),
      persist: false,
      defaultAdapter: 'graph',
      inspect,
    });
    const record = await runtime.run({ workflow: DIAMOND });
    expect(record.status).to.equal('success');
    const path = ['pending', 'running', 'success'];
    expect(seen).to.deep.equal({ a: path, b: path, c: path, d: path });
  });
});

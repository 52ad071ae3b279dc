import { expect } from 'chai';
import type { Agent } from '../../src/agents/types.js';
import { createRuntime } from '../../src/index.js';
import type { AdapterName, Runtime, WorkflowEvent } from '../../src/engine/types.js';
import { removeDir, sequence, tempDir } from './helpers.js';

// `run()` without subscribers does not build wire events (only numbers them); a subscriber that
// comes mid-run must still see the run's `seq` numbering, as if every event had been built.
for (const adapter of ['native', 'graph'] as const satisfies readonly AdapterName[]) {
  describe(`late subscriber (${adapter})`, () => {
    let dir: string;
    let runtime: Runtime | undefined;

    beforeEach(async () => {
      dir = await tempDir('agentic-late-');
    });

    afterEach(async () => {
      await runtime?.shutdown({ graceMs: 0 });
      runtime = undefined;
      await removeDir(dir);
    });

    it('sees seq continue from the events built for nobody', async () => {
      let reachedGate: () => void = () => undefined;
      const atGate = new Promise<void>((resolve) => (reachedGate = resolve));
      let openGate: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      const gated: Agent = async ({ input }) => {
        reachedGate();
        await gate;
        return {
          output: { ...input },
          modelUsed: 'gate',
          tokensUsed: { input: 1, output: 0, total: 1 },
        };
      };
      runtime = createRuntime({
        persist: false,
        runsDir: dir,
        agents: { tier1_gate: gated },
      });
      const done = runtime.run({
        adapter,
        workflow: {
          name: 'late',
          steps: [
            { name: 'a', agent: 'tier0_echo' },
            { name: 'b', agent: 'tier1_gate', depends_on: ['a'] },
            { name: 'c', agent: 'tier0_echo', depends_on: ['b'] },
          ],
        },
      });
      await atGate;
      const seen: WorkflowEvent[] = [];
      runtime.subscribe((event) => seen.push(event));
      openGate();
      const record = await done;

      expect(record.status).to.equal('success');
      // Built for nobody: workflow_start 0, step_start a 1, step_end a 2, step_start b 3.
      expect(sequence(seen)).to.deep.equal([
        'step_end:b',
        'step_start:c',
        'step_end:c',
        'workflow_end',
      ]);
      expect(seen.map((event) => event.seq)).to.deep.equal([4, 5, 6, 7]);
    });
  });
}

/**
 * The sequence rebuilt from a run file (what a late joiner gets after a restart) against the
 * sequence the same run emitted live, on both engines: field by field, apart from what the file
 * cannot hold (the `step_error` of a retried attempt, and the emission instant of each event).
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRuntime } from '../../src/engine/runtime.js';
import type { AdapterName, Runtime, WorkflowEvent } from '../../src/engine/types.js';
import { replayFromRecord } from '../../src/events/replay-from-record.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import {
  removeDir,
  runFiles,
  sequence,
  tempDir,
  validateEvent,
  validateRecord,
} from './helpers.js';

const WORKFLOW = `
name: failing_chain
inputs: { text: { type: string, default: hello } }
outputs: { echoed: { from: '\${steps.a.outputs.text}' } }
steps:
  - { name: a, agent: tier0_echo, inputs: { text: '\${inputs.text}' } }
  - { name: b, agent: tier0_fail, depends_on: [a], max_attempts: 2, inputs: { message: boom } }
  - { name: c, agent: tier0_echo, depends_on: [b] }
`;

/** `slow` is listed first; `fast` and `broken`, parallel with it, end first (issue 24.8). */
const PARALLEL = `
name: parallel_order
steps:
  - { name: slow, agent: tier0_sleep, inputs: { ms: 200 } }
  - { name: fast, agent: tier0_echo, inputs: { text: hi } }
  - { name: broken, agent: tier0_fail, inputs: { message: boom } }
  - { name: after_broken, agent: tier0_echo, depends_on: [broken] }
  - { name: last, agent: tier0_echo, depends_on: [slow, fast] }
`;

const withoutTimestamp = (event: WorkflowEvent): Record<string, unknown> => {
  const { timestamp: _timestamp, ...rest } = event;
  return rest;
};

for (const adapter of ['native', 'graph'] as const satisfies readonly AdapterName[]) {
  describe(`replay rebuilt from the run file (${adapter})`, () => {
    let runsDir: string;
    let runtime: Runtime | undefined;

    beforeEach(async () => {
      runsDir = await tempDir('agentic-replay-');
    });

    afterEach(async () => {
      await runtime?.shutdown({ graceMs: 0 });
      runtime = undefined;
      await removeDir(runsDir);
    });

    it('is the live sequence of a run with a retried, then failed step', async () => {
      runtime = createRuntime({ runsDir, noLlm: true, defaultAdapter: adapter, retryBaseMs: 1 });
      const handle = await runtime.start({ workflow: WORKFLOW, input: {} });
      const live: WorkflowEvent[] = [];
      for await (const event of handle.events) live.push(event);
      const finished = await handle.done;
      expect(finished.status).to.equal('failed');

      const end = live.at(-1);
      if (end?.type !== 'workflow_end' || typeof end.filename !== 'string')
        throw new Error('no filename');
      const onDisk = JSON.parse(await readFile(join(runsDir, end.filename), 'utf8')) as RunRecord;
      const rebuilt = replayFromRecord(onDisk, end.filename);

      // The failed attempt that was retried is not in the file: its message and delay are gone.
      const knowable = live
        .filter((event) => !(event.type === 'step_error' && event.status === 'retrying'))
        .map((event, seq) => ({ ...event, seq }));
      expect(sequence(rebuilt, true)).to.deep.equal([
        'workflow_start',
        'step_start:a',
        'step_end:a=success',
        'step_start:b',
        'step_error:b=failed',
        'step_end:b=failed',
        'step_end:c=skipped',
        'workflow_end=failed',
      ]);
      expect(sequence(rebuilt, true)).to.deep.equal(sequence(knowable, true));
      expect(JSON.parse(JSON.stringify(rebuilt.map(withoutTimestamp)))).to.deep.equal(
        JSON.parse(JSON.stringify(knowable.map(withoutTimestamp))),
      );
      const failure = rebuilt.find((event) => event.type === 'step_error');
      expect(failure).to.include({ attempt: 2, error: 'boom', status: 'failed' });
      for (const event of rebuilt) expect(validateEvent(event), event.type).to.equal(true);

      // A rebuilt timestamp is the file's time of that moment: never after the live emission,
      // and within the run.
      const runStart = Date.parse(onDisk.start_time);
      const runEnd = Date.parse(onDisk.end_time ?? '');
      rebuilt.forEach((event, i) => {
        const rebuiltAt = Date.parse(event.timestamp);
        const liveAt = Date.parse(knowable[i]?.timestamp ?? '');
        expect(rebuiltAt, `${event.type} ${i}`).to.be.within(runStart, Math.min(liveAt, runEnd));
      });
    });

    it('keeps the live order of parallel steps that ended out of file order (issue 24.8)', async () => {
      runtime = createRuntime({ runsDir, noLlm: true, defaultAdapter: adapter });
      const handle = await runtime.start({ workflow: PARALLEL, input: {} });
      const live: WorkflowEvent[] = [];
      for await (const event of handle.events) live.push(event);
      await handle.done;
      // The buffer goes with the runtime: the file is all a later reader has.
      await runtime.shutdown({ graceMs: 0 });
      runtime = undefined;
      const [file] = await runFiles(runsDir);
      if (file === undefined) throw new Error('no run file');
      expect(validateRecord(file.record), 'run file').to.equal(true);
      const rebuilt = replayFromRecord(file.record, file.name);

      const ends = sequence(live).filter((s) => s.startsWith('step_end'));
      expect(ends.slice(-2)).to.deep.equal(['step_end:slow', 'step_end:last']);
      expect(sequence(rebuilt, true)).to.deep.equal(sequence(live, true));
      expect(JSON.parse(JSON.stringify(rebuilt.map(withoutTimestamp)))).to.deep.equal(
        JSON.parse(JSON.stringify(live.map(withoutTimestamp))),
      );
    });
  });
}

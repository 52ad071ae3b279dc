/**
 * Sub-workflow steps (kind `workflow`) on both engines, through the real runtime and real files:
 * the parent's exact event sequence with the child's step events forwarded (tagged parent_step
 * and child_run_id), the child's own run file and the links both ways, the child's run actor
 * under the parent's, a failing child, cancel and the run timeout reaching the child, replay of
 * the parent from its file, and resume (a finished child reused, an interrupted one resumed).
 */
import { expect } from 'chai';
import { mkdir, readdir, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { InspectionEvent } from 'xstate';
import type { Agent } from '../../src/agents/types.js';
import { createRuntime } from '../../src/engine/runtime.js';
import type {
  AdapterName,
  Runtime,
  RuntimeOptions,
  WorkflowEvent,
} from '../../src/engine/types.js';
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

const CHILD = `name: child
inputs: { text: { type: string, required: true } }
outputs: { shout: { from: '\${steps.b.outputs.text}' } }
steps:
  - { name: a, agent: counted, inputs: { text: '\${inputs.text}' } }
  - { name: b, agent: gate, depends_on: [a], inputs: { text: '\${steps.a.outputs.text}!' } }
`;

const PARENT = `name: parent
outputs: { result: { from: '\${steps.after.outputs.got}' } }
steps:
  - { name: before, agent: counted, inputs: { text: hi } }
  - name: call
    workflow: child
    depends_on: [before]
    inputs: { text: '\${steps.before.outputs.text}' }
  - { name: after, agent: counted, depends_on: [call], inputs: { got: '\${steps.call.outputs.shout}' } }
`;

const FAILING_CHILD = `name: failing_child
steps:
  - { name: boom, agent: tier0_fail, inputs: { message: exploded } }
`;

const FAILING_PARENT = `name: failing_parent
steps:
  - { name: call, workflow: failing_child }
  - { name: after, agent: counted, depends_on: [call] }
`;

const TIMED_PARENT = `name: timed_parent
steps:
  - { name: call, workflow: child, timeout_seconds: 0.3, inputs: { text: hi } }
`;

const QUICK_CHILD = `name: quick_child
steps:
  - { name: only, agent: counted, inputs: { text: quick } }
`;

const TWO_CALLS = `name: two_calls
steps:
  - { name: first_call, workflow: quick_child }
  - { name: second_call, workflow: child, depends_on: [first_call], inputs: { text: hi } }
`;

const ADAPTERS: readonly AdapterName[] = ['native', 'graph'];

function record(calls: string[], step: string): void {
  calls.push(`${step}#${calls.filter((call) => call.startsWith(`${step}#`)).length + 1}`);
}

/** `counted` echoes its inputs; `gate` too, or blocks until aborted while `held`. */
function agentsOf(calls: string[], gate: { held: boolean; called?: () => void }) {
  const agents: Record<string, Agent> = {
    counted: ({ step, input }) => {
      record(calls, step.name);
      return Promise.resolve({ output: { ...input }, modelUsed: null, tokensUsed: null });
    },
    gate: ({ step, input, signal }) => {
      record(calls, step.name);
      gate.called?.();
      if (!gate.held) {
        return Promise.resolve({
          output: { text: String(input.text).toUpperCase() },
          modelUsed: null,
          tokensUsed: null,
        });
      }
      return new Promise((_, reject) =>
        signal.addEventListener('abort', () => reject(new Error('stopped'))),
      );
    },
  };
  return agents;
}

async function fileOf(
  runsDir: string,
  runId: string,
): Promise<{ name: string; record: RunRecord }> {
  const found = (await runFiles(runsDir)).find((file) => file.record.run_id === runId);
  if (found === undefined) throw new Error(`no run file of ${runId}`);
  return found;
}

/** The forwarded tag of an event: `type:step@parent_step` for a child's, as `sequence` else. */
function tagged(events: readonly WorkflowEvent[]): string[] {
  return events.map((event) => {
    const own = sequence([event], true)[0]!;
    const parent = (event as { parent_step?: string }).parent_step;
    return parent === undefined ? own : `${own}@${parent}`;
  });
}

for (const adapter of ADAPTERS) {
  describe(`sub-workflow steps: ${adapter} engine`, function () {
    this.timeout(30_000);
    let dir: string;
    let runsDir: string;
    let workflowsDir: string;
    const runtimes: Runtime[] = [];

    beforeEach(async () => {
      dir = await tempDir('agentic-subwf-');
      runsDir = join(dir, 'runs');
      workflowsDir = join(dir, 'workflows');
      await mkdir(workflowsDir);
      await writeFile(join(workflowsDir, 'child.yaml'), CHILD);
      await writeFile(join(workflowsDir, 'parent.yaml'), PARENT);
      await writeFile(join(workflowsDir, 'failing_child.yaml'), FAILING_CHILD);
      await writeFile(join(workflowsDir, 'failing_parent.yaml'), FAILING_PARENT);
      await writeFile(join(workflowsDir, 'timed_parent.yaml'), TIMED_PARENT);
      await writeFile(join(workflowsDir, 'quick_child.yaml'), QUICK_CHILD);
      await writeFile(join(workflowsDir, 'two_calls.yaml'), TWO_CALLS);
    });
    afterEach(async () => {
      for (const rt of runtimes.splice(0)) await rt.shutdown({ graceMs: 0 });
      await removeDir(dir);
    });

    function make(agents: Record<string, Agent>, options: RuntimeOptions = {}): Runtime {
      const rt = createRuntime({
        runsDir,
        workflowsDir,
        defaultAdapter: adapter,
        agents,
        retryBaseMs: 1,
        ...options,
      });
      runtimes.push(rt);
      return rt;
    }

    it('runs the child as a child run: the parent sequence, the child file, links both ways, the actor under the parent', async () => {
      const calls: string[] = [];
      type Ref = { id: string; _parent?: Ref; logic: { config?: { id?: string } } };
      const actors: Ref[] = [];
      // The children listed by each snapshot of the actor the child run is the child of.
      const listed: string[][] = [];
      const rt = make(agentsOf(calls, { held: false }), {
        inspect: (event: InspectionEvent) => {
          if (event.type === '@xstate.actor') actors.push(event.actorRef as unknown as Ref);
          if (event.type !== '@xstate.snapshot') return;
          const ref = event.actorRef as unknown as Ref;
          if (ref.id !== 'engine' || ref._parent?.id !== 'run-p1') return;
          const children = (event.snapshot as { children?: Record<string, unknown> }).children;
          const keys = Object.keys(children ?? {});
          if (JSON.stringify(listed.at(-1)) !== JSON.stringify(keys)) listed.push(keys);
        },
      });
      const handle = await rt.start({ workflow: 'parent', runId: 'p1' });
      const live: WorkflowEvent[] = [];
      for await (const event of handle.events) live.push(event);
      const done = await handle.done;
      expect(done.status, done.error ?? '').to.equal('success');
      expect(done.final_output).to.deep.equal({ result: 'HI!' });
      expect(calls).to.deep.equal(['before#1', 'a#1', 'b#1', 'after#1']);

      const child = 'p1-call-1';
      expect(tagged(live)).to.deep.equal([
        'workflow_start',
        'step_start:before',
        'step_end:before=success',
        'step_start:call',
        'step_start:a@call',
        'step_end:a=success@call',
        'step_start:b@call',
        'step_end:b=success@call',
        'step_end:call=success',
        'step_start:after',
        'step_end:after=success',
        'workflow_end=success',
      ]);
      live.forEach((event, seq) => {
        expect(event.run_id).to.equal('p1');
        expect(event.seq).to.equal(seq);
        expect(validateEvent(event), JSON.stringify(validateEvent.errors)).to.equal(true);
        if ('parent_step' in event) expect(event).to.include({ child_run_id: child });
      });
      const callEnd = live.find((e) => e.type === 'step_end' && e.step === 'call');
      expect(callEnd).to.deep.include({ agent: 'workflow:child', output: { shout: 'HI!' } });

      const parentFile = await fileOf(runsDir, 'p1');
      const childFile = await fileOf(runsDir, child);
      for (const file of [parentFile, childFile]) {
        expect(validateRecord(file.record), JSON.stringify(validateRecord.errors)).to.equal(true);
      }
      expect(parentFile.record.extra).to.deep.include({ child_run_ids: [child] });
      expect(childFile.record).to.deep.include({
        status: 'success',
        workflow_name: 'child',
        adapter,
        inputs: { text: 'hi' },
        final_output: { shout: 'HI!' },
      });
      expect(childFile.record.extra).to.deep.include({ parent_run_id: 'p1', parent_step: 'call' });
      expect(childFile.record.extra.workflow_hash).to.match(/^sha256:/);
      expect(parentFile.record.steps[1]).to.deep.include({
        step_name: 'call',
        agent: 'workflow:child',
        status: 'success',
        output: { shout: 'HI!' },
      });
      // The inspector sees the child's run actor as the invoked child of the step: the parent's
      // engine actor's child, with the invoke's id; its own engine runs the child workflow.
      const childActor = actors.find((ref) => ref.id === 'child:call')!;
      expect(childActor._parent?.id).to.equal('engine');
      expect(childActor._parent?._parent?.id).to.equal('run-p1');
      const childEngine = actors.find((ref) => ref._parent === childActor)!;
      expect(childEngine.logic.config?.id).to.equal(
        adapter === 'graph' ? 'graph_child' : 'native-scheduler',
      );
      // The graph machine lists it in its snapshot while the step runs (the native scheduler
      // has no states to draw it in).
      expect(listed).to.deep.equal(adapter === 'graph' ? [[], ['child:call'], []] : [[]]);

      // The parent's file replays the parent's own events (the child's are in its own file),
      // numbered from 0 as a replay from a file is.
      const own = live.filter((event) => !('parent_step' in event));
      const rebuilt = replayFromRecord(parentFile.record, parentFile.name);
      expect(sequence(rebuilt, true)).to.deep.equal(sequence(own, true));
      expect(rebuilt.map((event) => event.seq)).to.deep.equal(own.map((_, seq) => seq));
    });

    it("fails the step with the child's error and run id; its dependents are skipped", async () => {
      const calls: string[] = [];
      const rt = make(agentsOf(calls, { held: false }));
      const handle = await rt.start({ workflow: 'failing_parent', runId: 'pf' });
      const live: WorkflowEvent[] = [];
      for await (const event of handle.events) live.push(event);
      const done = await handle.done;
      const error = "workflow 'failing_child' failed (run pf-call-1): step 'boom' failed: exploded";
      expect(done.status).to.equal('failed');
      expect(done.error).to.equal(`step 'call' failed: ${error}`);
      expect(tagged(live)).to.deep.equal([
        'workflow_start',
        'step_start:call',
        'step_start:boom@call',
        'step_error:boom=failed@call',
        'step_end:boom=failed@call',
        'step_error:call=failed',
        'step_end:call=failed',
        'step_end:after=skipped',
        'workflow_end=failed',
      ]);
      expect(calls).to.deep.equal([]);
      const childFile = await fileOf(runsDir, 'pf-call-1');
      expect(childFile.record).to.include({
        status: 'failed',
        error: "step 'boom' failed: exploded",
      });
      expect((await fileOf(runsDir, 'pf')).record.steps[0]).to.include({ status: 'failed', error });
    });

    it('cancelling the parent cancels the child: both end failed, the step with the reason', async () => {
      let called!: () => void;
      const gateCalled = new Promise<void>((resolve) => (called = resolve));
      const rt = make(agentsOf([], { held: true, called }));
      const handle = await rt.start({ workflow: 'parent', runId: 'pc' });
      await gateCalled;
      expect(rt.activeRuns().sort()).to.deep.equal(['pc', 'pc-call-1']);
      rt.cancel('pc', 'stop it');
      const done = await handle.done;
      expect(done.status).to.equal('failed');
      expect(done.error).to.equal('stop it');
      const childFile = await fileOf(runsDir, 'pc-call-1');
      expect(childFile.record).to.include({ status: 'failed', error: 'stop it' });
      expect(childFile.record.steps.map((s) => [s.step_name, s.status])).to.deep.equal([
        ['a', 'success'],
        ['b', 'failed'],
      ]);
      const call = (await fileOf(runsDir, 'pc')).record.steps[1];
      expect(call).to.include({ step_name: 'call', status: 'failed' });
      expect(rt.activeRuns()).to.deep.equal([]);
    });

    it("the parent's run timeout ends the child", async () => {
      let called!: () => void;
      const gateCalled = new Promise<void>((resolve) => (called = resolve));
      const rt = make(agentsOf([], { held: true, called }));
      const handle = await rt.start({ workflow: 'parent', runId: 'pt', timeoutMs: 1_000 });
      await gateCalled;
      const done = await handle.done;
      expect(done).to.include({ status: 'failed', error: 'run timed out' });
      const childFile = await fileOf(runsDir, 'pt-call-1');
      expect(childFile.record).to.include({ status: 'failed', error: 'run timed out' });
    });

    it("the step's timeout_seconds cancels the child and fails the step", async () => {
      const rt = make(agentsOf([], { held: true }));
      const handle = await rt.start({ workflow: 'timed_parent', runId: 'ps' });
      const done = await handle.done;
      const childFile = await fileOf(runsDir, 'ps-call-1');
      expect(childFile.record).to.include({ status: 'failed', error: 'step timed out after 0.3s' });
      expect(done.steps[0]).to.include({
        status: 'failed',
        error: "workflow 'child' failed (run ps-call-1): step timed out after 0.3s",
      });
    });

    it('a resumed parent resumes its interrupted child under the same run id; finished steps are not run again', async () => {
      const calls: string[] = [];
      let called!: () => void;
      const gateCalled = new Promise<void>((resolve) => (called = resolve));
      const first = make(agentsOf(calls, { held: true, called }));
      await first.start({ workflow: 'parent', runId: 'pr' });
      await gateCalled;
      await first.shutdown({ graceMs: 0 });
      runtimes.splice(runtimes.indexOf(first), 1);
      expect((await fileOf(runsDir, 'pr')).record.status).to.equal('running');
      expect((await fileOf(runsDir, 'pr-call-1')).record.status).to.equal('running');
      for (const name of await readdir(runsDir)) {
        if (name.endsWith('.owner')) await unlink(join(runsDir, name));
      }

      const later: string[] = [];
      const rt = make(agentsOf(later, { held: false }));
      const events: WorkflowEvent[] = [];
      const ended = new Promise<void>((resolve) =>
        rt.subscribe((event) => {
          if (event.run_id !== 'pr') return;
          events.push(event);
          if (event.type === 'workflow_end') resolve();
        }),
      );
      await ended;
      const report = await rt.recovery;
      expect(report.resumed).to.have.length(1);
      // Only the child's interrupted step and the parent's last step ran here.
      expect(calls).to.deep.equal(['before#1', 'a#1', 'b#1']);
      expect(later).to.deep.equal(['b#1', 'after#1']);
      const parentFile = await fileOf(runsDir, 'pr');
      expect(parentFile.record.status).to.equal('success');
      expect(parentFile.record.final_output).to.deep.equal({ result: 'HI!' });
      expect(parentFile.record.extra).to.deep.include({ child_run_ids: ['pr-call-1'] });
      const childFile = await fileOf(runsDir, 'pr-call-1');
      expect(childFile.record.status).to.equal('success');
      expect(childFile.record.extra.resumes).to.have.length(1);
      // No second child was started.
      expect((await runFiles(runsDir)).map((f) => f.record.run_id).sort()).to.deep.equal([
        'pr',
        'pr-call-1',
      ]);
      expect(tagged(events).slice(-6)).to.deep.equal([
        'step_start:b@call',
        'step_end:b=success@call',
        'step_end:call=success',
        'step_start:after',
        'step_end:after=success',
        'workflow_end=success',
      ]);
    });

    it('a resumed parent lists every child in child_run_ids: those of the interrupted run too', async () => {
      let called!: () => void;
      const gateCalled = new Promise<void>((resolve) => (called = resolve));
      const first = make(agentsOf([], { held: true, called }));
      await first.start({ workflow: 'two_calls', runId: 'pt' });
      await gateCalled;
      await first.shutdown({ graceMs: 0 });
      runtimes.splice(runtimes.indexOf(first), 1);
      for (const name of await readdir(runsDir)) {
        if (name.endsWith('.owner')) await unlink(join(runsDir, name));
      }
      const rt = make(agentsOf([], { held: false }), { resume: 'manual' });
      await rt.recovery;
      const done = await (await rt.resume('pt')).done;
      expect(done.status, done.error ?? '').to.equal('success');
      // pt-first_call-1 finished before the interruption; pt-second_call-1 was resumed by the step.
      expect(done.extra).to.deep.include({
        child_run_ids: ['pt-first_call-1', 'pt-second_call-1'],
      });
      const file = await fileOf(runsDir, 'pt');
      expect(file.record.extra).to.deep.include({
        child_run_ids: ['pt-first_call-1', 'pt-second_call-1'],
      });
    });

    it('a resumed parent reuses a child that had finished: it does not run again', async () => {
      const calls: string[] = [];
      let called!: () => void;
      const gateCalled = new Promise<void>((resolve) => (called = resolve));
      const first = make(agentsOf(calls, { held: true, called }));
      await first.start({ workflow: 'parent', runId: 'pu' });
      await gateCalled;
      await first.shutdown({ graceMs: 0 });
      runtimes.splice(runtimes.indexOf(first), 1);
      for (const name of await readdir(runsDir)) {
        if (name.endsWith('.owner')) await unlink(join(runsDir, name));
      }
      // With resume manual both are marked interrupted; the child is resumed alone and ends.
      const later: string[] = [];
      const rt = make(agentsOf(later, { held: false }), { resume: 'manual' });
      await rt.recovery;
      const child = await rt.resume('pu-call-1');
      expect((await child.done).status).to.equal('success');
      expect(later).to.deep.equal(['b#1']);

      const parent = await rt.resume('pu');
      const done = await parent.done;
      expect(done.status, done.error ?? '').to.equal('success');
      expect(done.final_output).to.deep.equal({ result: 'HI!' });
      // The child was not run again: only the parent's last step ran.
      expect(later).to.deep.equal(['b#1', 'after#1']);
      expect(done.extra).to.deep.include({ child_run_ids: ['pu-call-1'] });
      expect(done.steps[1]).to.deep.include({ step_name: 'call', status: 'success' });
    });
  });
}

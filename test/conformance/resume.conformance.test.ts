/**
 * Durable runs (docs/durable-runs.md) on both engines, through the real runtime and real files:
 * a run left by a runtime that stopped is resumed by the next one, from its run file and
 * journal, with the workflow it started with; finished steps are not run again, the
 * interrupted step is retried. The process-level faults (kill -9, SIGTERM) are in
 * test/e2e/resume.test.ts.
 */
import { expect } from 'chai';
import { mkdir, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Agent } from '../../src/agents/types.js';
import { createRuntime } from '../../src/engine/runtime.js';
import type {
  AdapterName,
  Runtime,
  RuntimeOptions,
  WorkflowEvent,
} from '../../src/engine/types.js';
import { ERROR_CODES, type AppError } from '../../src/errors.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import {
  removeDir,
  runFiles,
  sequence,
  tempDir,
  validateEvent,
  validateRecord,
} from './helpers.js';

const ADAPTERS: readonly AdapterName[] = ['native', 'graph'];

const CHAIN = `name: chain
steps:
  - { name: a, agent: counted, inputs: { n: 1 }, outputs: { n: first } }
  - { name: b, agent: counted, depends_on: [a], inputs: { prev: '\${context.first}' } }
  - { name: c, agent: gate, depends_on: [b], max_attempts: 3 }
  - { name: d, agent: counted, depends_on: [c], inputs: { from: '\${steps.b.outputs.step}' } }
`;

/** Records a call of `step`: `step#n`, its n-th call (over every runtime sharing `calls`). */
function record(calls: string[], step: string): void {
  calls.push(`${step}#${calls.filter((call) => call.startsWith(`${step}#`)).length + 1}`);
}

/** The agents of a test: every call recorded; `gate` blocks while `held`. */
function agentsOf(calls: string[], gate: { held: boolean; called?: () => void }) {
  const agents: Record<string, Agent> = {
    counted: ({ step, input }) => {
      record(calls, step.name);
      return Promise.resolve({
        output: { ...input, step: step.name },
        modelUsed: null,
        tokensUsed: null,
      });
    },
    gate: ({ step, signal }) => {
      record(calls, step.name);
      gate.called?.();
      if (!gate.held) {
        return Promise.resolve({ output: { passed: true }, modelUsed: null, tokensUsed: null });
      }
      return new Promise((_, reject) =>
        signal.addEventListener('abort', () => reject(new Error('stopped'))),
      );
    },
  };
  return agents;
}

async function readRecord(
  runsDir: string,
  runId: string,
): Promise<{ name: string; record: RunRecord }> {
  const files = await runFiles(runsDir);
  const found = files.find((f) => f.record.run_id === runId);
  if (found === undefined) throw new Error(`no run file of ${runId}`);
  return found;
}

/** The owner files left in the runs directory (a stopped runtime keeps its own: runs were left). */
async function removeOwnerFiles(runsDir: string): Promise<void> {
  for (const name of await readdir(runsDir)) {
    if (name.endsWith('.owner')) await unlink(join(runsDir, name));
  }
}

function rejection<T>(promise: Promise<unknown>): Promise<T> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error as T,
  );
}

for (const adapter of ADAPTERS) {
  describe(`durable runs: ${adapter} engine`, function () {
    this.timeout(30_000);
    let dir: string;
    let runsDir: string;
    let workflowsDir: string;
    const runtimes: Runtime[] = [];

    beforeEach(async () => {
      dir = await tempDir('agentic-resume-');
      runsDir = join(dir, 'runs');
      workflowsDir = join(dir, 'workflows');
      await mkdir(workflowsDir);
      await writeFile(join(workflowsDir, 'chain.yaml'), CHAIN);
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

    /**
     * Runtime A starts run `runId` and stops while step c runs (a deploy whose grace passed):
     * a and b finished, c interrupted. Returns A's calls and owner id.
     */
    async function interruptedRun(runId: string, options: RuntimeOptions = {}) {
      const calls: string[] = [];
      let called!: () => void;
      const gateCalled = new Promise<void>((resolve) => (called = resolve));
      const first = make(agentsOf(calls, { held: true, called }), options);
      await first.start({ workflow: 'chain', runId });
      await gateCalled;
      await first.shutdown({ graceMs: 0 });
      runtimes.splice(runtimes.indexOf(first), 1);
      const { name, record } = await readRecord(runsDir, runId);
      // Left to the next start: still running, its finished steps in its journal.
      expect(record.status).to.equal('running');
      const journal = await readFile(join(runsDir, `.${name}.journal`), 'utf8');
      expect(journal).to.include('"step_name":"a"').and.include('"step_name":"b"');
      await removeOwnerFiles(runsDir);
      return { calls, owner: record.owner!, name, before: record };
    }

    /** Starts runtime B and collects the wire events of `runId` until its workflow_end. */
    function nextRuntime(calls: string[], runId: string, options: RuntimeOptions = {}) {
      const rt = make(agentsOf(calls, { held: false }), options);
      const events: WorkflowEvent[] = [];
      const ended = new Promise<void>((resolve) =>
        rt.subscribe((event) => {
          if (event.run_id !== runId) return;
          events.push(event);
          if (event.type === 'workflow_end') resolve();
        }),
      );
      return { rt, events, ended };
    }

    it('resumes a run left at shutdown at the next start: finished steps kept, the interrupted one retried', async () => {
      const { calls, owner, name } = await interruptedRun('left-1');
      expect(calls).to.deep.equal(['a#1', 'b#1', 'c#1']);
      // The YAML is edited after the run started: the resume uses the run's pinned copy.
      await writeFile(
        join(workflowsDir, 'chain.yaml'),
        CHAIN.replace('max_attempts: 3', 'max_attempts: 1'),
      );

      const later: string[] = [];
      const { rt, events, ended } = nextRuntime(later, 'left-1');
      await ended;
      const report = await rt.recovery;
      expect(report.resumed).to.deep.equal([name]);
      expect(report.recovered).to.deep.equal([]);
      // Only the interrupted step (again: its second attempt) and the one after it ran here.
      expect(later).to.deep.equal(['c#1', 'd#1']);

      for (const event of events)
        expect(validateEvent(event), JSON.stringify(event)).to.equal(true);
      expect(sequence(events, true)).to.deep.equal([
        'workflow_start',
        'step_start:a',
        'step_end:a=success',
        'step_start:b',
        'step_end:b=success',
        'step_start:c',
        'step_end:c=success',
        'step_start:d',
        'step_end:d=success',
        'workflow_end=success',
      ]);
      expect(events[0]).to.include({ type: 'workflow_start', resumed: true });
      expect(events[5]).to.include({ type: 'step_start', step: 'c', attempt: 2 });

      const { record } = await readRecord(runsDir, 'left-1');
      expect(validateRecord(record), JSON.stringify(validateRecord.errors)).to.equal(true);
      expect(record.status).to.equal('success');
      expect(record).not.to.have.property('owner');
      expect(record.steps.map((s) => [s.step_name, s.status, s.metadata.attempts])).to.deep.equal([
        ['a', 'success', 1],
        ['b', 'success', 1],
        ['c', 'success', 2],
        ['d', 'success', 1],
      ]);
      // d read b's output, kept from the first runtime.
      expect(record.steps[3]!.input).to.deep.equal({ from: 'b' });
      const extra = record.extra as { resumes: unknown[]; workflow_hash: string };
      expect(extra.workflow_hash).to.match(/^sha256:[0-9a-f]{64}$/);
      expect(extra.resumes).to.have.length(1);
      expect(extra.resumes[0]).to.deep.include({ reason: 'restart', from_process: owner });
      // The journal went with the end record; the pinned copy stays (and the live runtime's
      // owner file and process log).
      const left = (await readdir(runsDir)).filter(
        (n) => n.startsWith('.') && !n.endsWith('.owner') && !n.endsWith('.log'),
      );
      expect(left).to.deep.equal(['.workflows']);
    });

    it('resumes a run interrupted inside a map step: the map runs again whole, as its next attempt', async () => {
      await writeFile(
        join(workflowsDir, 'mapped.yaml'),
        `name: mapped
steps:
  - { name: a, agent: counted, inputs: { n: 1 } }
  - { name: m, for_each: [1, 2, 3], max_concurrency: 2, agent: gate, depends_on: [a], inputs: { v: '\${item.value}' } }
  - { name: d, agent: counted, depends_on: [m], inputs: { n: '\${steps.m.outputs.failed}' } }
`,
      );
      const calls: string[] = [];
      let started = 0;
      let twoStarted!: () => void;
      const running = new Promise<void>((resolve) => (twoStarted = resolve));
      const first = make(
        agentsOf(calls, { held: true, called: () => ++started === 2 && twoStarted() }),
      );
      await first.start({ workflow: 'mapped', runId: 'map-1' });
      await running;
      await first.shutdown({ graceMs: 0 });
      runtimes.splice(runtimes.indexOf(first), 1);
      await removeOwnerFiles(runsDir);
      expect(calls).to.deep.equal(['a#1', 'm#1', 'm#2']);

      const later: string[] = [];
      const { events, ended } = nextRuntime(later, 'map-1');
      await ended;
      // a is kept; every item of m runs again (items are not journaled one by one), then d.
      expect(later).to.deep.equal(['m#1', 'm#2', 'm#3', 'd#1']);
      expect(events.find((e) => e.type === 'step_start' && e.step === 'm')).to.include({
        attempt: 2,
      });
      const { record } = await readRecord(runsDir, 'map-1');
      expect(validateRecord(record), JSON.stringify(validateRecord.errors)).to.equal(true);
      expect(record.status).to.equal('success');
      expect(record.steps[1]).to.deep.include({
        status: 'success',
        output: { results: [{ passed: true }, { passed: true }, { passed: true }], failed: 0 },
      });
      expect(record.steps[1]!.metadata).to.deep.include({
        attempts: 2,
        items: { total: 3, succeeded: 3, failed: 0 },
      });
    });

    it('keeps a finished map step (its items summary too) when resuming a later step', async () => {
      await writeFile(
        join(workflowsDir, 'mapped_done.yaml'),
        `name: mapped_done
steps:
  - { name: m, for_each: [1, 2], agent: counted, inputs: { v: '\${item.value}' } }
  - { name: d, agent: gate, depends_on: [m] }
`,
      );
      const calls: string[] = [];
      let called!: () => void;
      const gateCalled = new Promise<void>((resolve) => (called = resolve));
      const first = make(agentsOf(calls, { held: true, called }));
      await first.start({ workflow: 'mapped_done', runId: 'map-2' });
      await gateCalled;
      await first.shutdown({ graceMs: 0 });
      runtimes.splice(runtimes.indexOf(first), 1);
      await removeOwnerFiles(runsDir);
      const later: string[] = [];
      const { ended } = nextRuntime(later, 'map-2');
      await ended;
      expect(later).to.deep.equal(['d#1']);
      const { record } = await readRecord(runsDir, 'map-2');
      expect(record.status).to.equal('success');
      expect(record.steps[0]!.metadata).to.deep.include({
        items: { total: 2, succeeded: 2, failed: 0 },
      });
      expect(record.steps[0]!.output).to.deep.equal({
        results: [
          { v: 1, step: 'm' },
          { v: 2, step: 'm' },
        ],
        failed: 0,
      });
    });

    it('resumes, from a live runtime, the runs of another whose owner lease ran out (orphan watch)', async () => {
      const calls: string[] = [];
      // B runs first, so its start-up scan sees A alive; its watch looks every 100 ms.
      const later: string[] = [];
      const { rt, events, ended } = nextRuntime(later, 'orphan-1', { ownerLeaseMs: 300 });
      await rt.recovery;
      let called!: () => void;
      const gateCalled = new Promise<void>((resolve) => (called = resolve));
      const first = make(agentsOf(calls, { held: true, called }), { ownerLeaseMs: 300 });
      await first.start({ workflow: 'chain', runId: 'orphan-1' });
      await gateCalled;
      // A stops without ending the run and keeps its owner file, no longer refreshed: once the
      // lease has run out B takes A for gone and resumes its run.
      await first.shutdown({ graceMs: 0 });
      runtimes.splice(runtimes.indexOf(first), 1);
      await ended;
      expect(calls).to.deep.equal(['a#1', 'b#1', 'c#1']);
      expect(later).to.deep.equal(['c#1', 'd#1']);
      expect(events[0]).to.include({ type: 'workflow_start', resumed: true });
      const { record } = await readRecord(runsDir, 'orphan-1');
      expect(record.status).to.equal('success');
      const resumes = (record.extra as { resumes: Record<string, unknown>[] }).resumes;
      expect(resumes).to.have.length(1);
      expect(resumes[0]).to.include({ reason: 'owner_gone' });
    });

    it('resumes with the pinned copy after the YAML was deleted', async () => {
      const { calls } = await interruptedRun('gone-yaml');
      await rm(join(workflowsDir, 'chain.yaml'));
      const { ended } = nextRuntime(calls, 'gone-yaml');
      await ended;
      expect((await readRecord(runsDir, 'gone-yaml')).record.status).to.equal('success');
      expect(calls).to.deep.equal(['a#1', 'b#1', 'c#1', 'c#2', 'd#1']);
    });

    it('manual: leaves the run interrupted until runtime.resume, then finishes it', async () => {
      const { calls } = await interruptedRun('manual-1');
      const rt = make(agentsOf(calls, { held: false }), { resume: 'manual' });
      const report = await rt.recovery;
      expect(report.recovered).to.have.length(1);
      expect((await readRecord(runsDir, 'manual-1')).record).to.include({
        status: 'failed',
        error: 'interrupted',
      });
      const handle = await rt.resume('manual-1');
      const events: WorkflowEvent[] = [];
      for await (const event of handle.events) events.push(event);
      const record = await handle.done;
      expect(record.status).to.equal('success');
      expect(calls).to.deep.equal(['a#1', 'b#1', 'c#1', 'c#2', 'd#1']);
      expect(events[0]).to.include({ type: 'workflow_start', resumed: true });
      expect((record.extra as { resumes: { reason: string }[] }).resumes[0]!.reason).to.equal(
        'request',
      );
      // Ended: a second resume is a conflict; an unknown run is not found.
      const again = await rejection<AppError>(rt.resume('manual-1'));
      expect([again.status, again.code]).to.deep.equal([409, ERROR_CODES.RUN_NOT_RESUMABLE]);
      expect(again.message).to.equal('run manual-1 ended success; only an interrupted run resumes');
      const unknown = await rejection<AppError>(rt.resume('no-such-run'));
      expect([unknown.status, unknown.code]).to.deep.equal([404, ERROR_CODES.RUN_NOT_FOUND]);
    });

    it('refuses with 422 when the pinned copy is gone and the YAML changed', async () => {
      const { calls } = await interruptedRun('changed-1');
      await rm(join(runsDir, '.workflows'), { recursive: true });
      await writeFile(join(workflowsDir, 'chain.yaml'), CHAIN.replace('n: 1', 'n: 2'));
      const rt = make(agentsOf(calls, { held: false }), { resume: 'manual' });
      await rt.recovery;
      const refused = await rejection<AppError>(rt.resume('changed-1'));
      expect([refused.status, refused.code]).to.deep.equal([422, ERROR_CODES.RUN_NOT_RESUMABLE]);
      expect(refused.message).to.match(
        /^the workflow run changed-1 started with \(sha256:[0-9a-f]{64}\) is gone: its pinned copy is missing and workflow 'chain' has changed$/,
      );
      expect(calls).to.deep.equal(['a#1', 'b#1', 'c#1']);
    });

    it('auto: a run that cannot be resumed is marked interrupted, saying why', async () => {
      await interruptedRun('lost-1');
      await rm(join(runsDir, '.workflows'), { recursive: true });
      await rm(join(workflowsDir, 'chain.yaml'));
      const rt = make(agentsOf([], { held: false }));
      const report = await rt.recovery;
      expect(report.resumed).to.deep.equal([]);
      expect(report.recovered).to.have.length(1);
      const { record } = await readRecord(runsDir, 'lost-1');
      expect(record).to.include({ status: 'failed', error: 'interrupted' });
      expect((record.extra as { warnings: string[] }).warnings).to.deep.equal([
        'not resumed: the workflow run lost-1 started with (' +
          (record.extra as { workflow_hash: string }).workflow_hash +
          ") is gone: its pinned copy is missing and workflow 'chain' no longer exists",
      ]);
    });

    it('fails a step with resume: fail instead of running it again', async () => {
      await writeFile(
        join(workflowsDir, 'chain.yaml'),
        CHAIN.replace('max_attempts: 3', 'max_attempts: 3, resume: fail'),
      );
      const { calls } = await interruptedRun('once-1');
      const { ended } = nextRuntime(calls, 'once-1');
      await ended;
      const { record } = await readRecord(runsDir, 'once-1');
      expect(record.status).to.equal('failed');
      expect(
        record.steps.map((s) => [s.step_name, s.status, s.error ?? s.metadata.skip_reason]),
      ).to.deep.equal([
        ['a', 'success', undefined],
        ['b', 'success', undefined],
        ['c', 'failed', 'interrupted'],
        ['d', 'skipped', 'dependency failed: c'],
      ]);
      expect(calls).to.deep.equal(['a#1', 'b#1', 'c#1']);
    });

    it('counts interruptions across resumes: a step interrupted more times than its max_attempts fails interrupted', async () => {
      await writeFile(
        join(workflowsDir, 'chain.yaml'),
        CHAIN.replace('max_attempts: 3', 'max_attempts: 1'),
      );
      const { calls } = await interruptedRun('spent-1');
      // The second runtime makes the interrupted attempt again, and stops under it too.
      let called!: () => void;
      const gateCalled = new Promise<void>((resolve) => (called = resolve));
      const second = make(agentsOf(calls, { held: true, called }));
      await gateCalled;
      await second.shutdown({ graceMs: 0 });
      runtimes.splice(runtimes.indexOf(second), 1);
      const between = (await readRecord(runsDir, 'spent-1')).record;
      expect(between.steps[2]!.metadata).to.include({ attempts: 2, interruptions: 1 });
      await removeOwnerFiles(runsDir);

      const { ended } = nextRuntime(calls, 'spent-1');
      await ended;
      const { record } = await readRecord(runsDir, 'spent-1');
      expect(record.steps[2]).to.deep.include({ status: 'failed', error: 'interrupted' });
      expect(record.steps[2]!.metadata.attempts).to.equal(2);
      expect(calls).to.deep.equal(['a#1', 'b#1', 'c#1', 'c#2']);
      expect((record.extra as { resumes: unknown[] }).resumes).to.have.length(2);
    });
  });
}

import { expect } from 'chai';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { createRuntime } from '../../../src/engine/runtime.js';
import type { Runtime, RuntimeOptions, WorkflowEvent } from '../../../src/engine/types.js';
import { ConflictError, ERROR_CODES, ValidationError, type AppError } from '../../../src/errors.js';
import type { RunRecord } from '../../../src/generated/run-record.js';
import { PROCESS_LOG_FILE } from '../../../src/store/process-log.js';
import { writeRunFile } from '../../../src/store/run-files.js';
import { startedRunRecord } from '../../../src/store/run-record.js';
import { compileWorkflow } from '../../../src/workflow/compile.js';
import {
  CLOCK_START,
  nextEvent,
  removeDir,
  runFiles,
  sequence,
  tempDir,
} from '../../conformance/helpers.js';
import { TestClock } from '../../fixtures/test-clock.js';
import { rejection } from '../../support/rejection.js';

const SLEEPY = 'name: sleepy\nsteps:\n  - { name: s, agent: tier0_sleep, inputs: { ms: 60000 } }\n';
const ECHO = 'name: echo\nsteps:\n  - { name: e, agent: tier0_echo, inputs: { v: 1 } }\n';

describe('createRuntime', () => {
  let dir: string;
  let runtime: Runtime | undefined;
  const make = (options: RuntimeOptions = {}) =>
    (runtime = createRuntime({
      runsDir: join(dir, 'runs'),
      workflowsDir: join(dir, 'wf'),
      defaultAdapter: 'native',
      ...options,
    }));

  beforeEach(async () => {
    dir = await tempDir('agentic-rt-');
    await mkdir(join(dir, 'wf'));
    await writeFile(join(dir, 'wf', 'echo.yaml'), ECHO);
  });
  afterEach(async () => {
    await runtime?.shutdown({ graceMs: 1000 });
    runtime = undefined;
    await removeDir(dir);
  });

  it('rejects bad run ids, duplicate active run ids and unknown adapters before starting', async () => {
    const rt = make();
    const bad = await rejection(rt.start({ workflow: ECHO, runId: 'has space' }));
    expect(bad).to.be.instanceOf(ValidationError);
    expect((bad as ValidationError).details[0]!.loc).to.deep.equal(['run_id']);
    expect(await rejection(rt.start({ workflow: ECHO, runId: 'x'.repeat(129) }))).to.be.instanceOf(
      ValidationError,
    );
    const handle = await rt.start({ workflow: SLEEPY, runId: 'same_id-1' });
    expect(await rejection(rt.start({ workflow: ECHO, runId: 'same_id-1' }))).to.be.instanceOf(
      ConflictError,
    );
    const unknown = await rejection<AppError>(
      rt.start({ workflow: ECHO, adapter: 'fancy' as never }),
    );
    expect(unknown).to.include({ code: ERROR_CODES.ADAPTER_UNKNOWN, status: 422 });
    rt.cancel(handle.runId);
    await handle.done;
  });

  it('generates run ids <workflow>-<suffix> (the Python service shape), sortable per workflow', async () => {
    const rt = make({ persist: false });
    const a = await rt.start({ workflow: ECHO });
    const b = await rt.start({ workflow: 'echo' });
    for (const id of [a.runId, b.runId]) expect(id).to.match(/^echo-[a-z0-9]{23}$/);
    expect(a.runId.slice(0, 14) <= b.runId.slice(0, 14)).to.equal(true);
    expect(a.runId).to.not.equal(b.runId);
    await Promise.all([a.done, b.done]);
  });

  it('converts form-style input strings and rejects unknown inputs, as HTTP and the CLI do', async () => {
    const rt = make({ persist: false });
    const typed =
      'name: typed\ninputs: { n: { type: integer }, on: { type: boolean } }\n' +
      "steps:\n  - { name: e, agent: tier0_echo, inputs: { n: '${inputs.n}', on: '${inputs.on}' } }\n";
    const record = await rt.run({ workflow: typed, input: { n: '40', on: 'True' } });
    expect(record.steps[0]!.output).to.deep.equal({ n: 40, on: true });
    const unknown = await rejection<ValidationError>(
      rt.run({ workflow: typed, input: { n: 1, m: 2 } }),
    );
    expect(unknown).to.be.instanceOf(ValidationError);
    expect(unknown.details).to.deep.equal([
      { loc: ['input', 'm'], msg: "unknown input 'm'; typed takes n, on", type: 'extra_forbidden' },
    ]);
  });

  it('gives a handle whose events start at workflow_start even when iterated after the end', async () => {
    const rt = make();
    const handle = await rt.start({ workflow: 'echo' });
    const record = await handle.done;
    const events: WorkflowEvent[] = [];
    for await (const event of handle.events) events.push(event);
    expect(sequence(events)).to.deep.equal([
      'workflow_start',
      'step_start:e',
      'step_end:e',
      'workflow_end',
    ]);
    expect(events[0]).to.include({ workflow_name: 'echo', adapter: 'native', step_count: 1 });
    expect(record.status).to.equal('success');
  });

  it('keeps no events for the handle of a run started with events: false; subscribers get them all', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const rt = make({
      persist: false,
      agents: {
        hold: () =>
          released.then(() => ({ output: { ok: true }, modelUsed: null, tokensUsed: null })),
      },
    });
    // Only weak references to the events (this listener keeps nothing).
    const seen = new Map<string, WeakRef<WorkflowEvent>[]>();
    rt.subscribe((event) => {
      seen.set(event.run_id, [...(seen.get(event.run_id) ?? []), new WeakRef(event)]);
    });
    const workflow = { name: 'held', steps: [{ name: 'a', agent: 'hold' }] };
    const kept = await rt.start({ workflow, runId: 'kept' });
    const dropped = await rt.start({ workflow, runId: 'dropped', events: false });
    // Both runs are waiting in their step: workflow_start and step_start are out.
    while ((seen.get('dropped')?.length ?? 0) < 2 || (seen.get('kept')?.length ?? 0) < 2) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // A WeakRef's target lives at least until the current job ends.
    await new Promise<void>((resolve) => setImmediate(resolve));
    gc();
    const alive = (runId: string): number =>
      (seen.get(runId) ?? []).filter((ref) => ref.deref() !== undefined).length;
    expect(alive('kept'), "the default handle's buffer").to.equal(2);
    expect(alive('dropped'), 'events kept for a handle without events').to.equal(0);
    release();
    expect((await dropped.done).status).to.equal('success');
    expect(seen.get('dropped')).to.have.length(4);
    const events: WorkflowEvent[] = [];
    for await (const event of dropped.events) events.push(event);
    expect(events).to.deep.equal([]);
    for await (const event of kept.events) events.push(event);
    expect(sequence(events)).to.deep.equal([
      'workflow_start',
      'step_start:a',
      'step_end:a',
      'workflow_end',
    ]);
  });

  it('publishes every event to subscribers and every record write to onRecord, files only when persisting', async () => {
    const rt = make({ persist: false });
    const events: string[] = [];
    const records: [string, string][] = [];
    const stopEvents = rt.subscribe((e) => events.push(e.type));
    rt.onRecord((record, filename) => records.push([record.status, filename]));
    await rt.run({ workflow: ECHO });
    stopEvents();
    await rt.run({ workflow: ECHO });
    expect(events).to.deep.equal(['workflow_start', 'step_start', 'step_end', 'workflow_end']);
    expect(records.map((r) => r[0])).to.deep.equal(['running', 'success', 'running', 'success']);
    expect(records[0]![1]).to.match(/_echo_.+\.json$/);
    expect(await runFiles(join(dir, 'runs')).catch(() => [])).to.have.length(0);
  });

  it('resolves start once the start record is durable in the process log; its run file follows', async () => {
    const rt = make();
    const handle = await rt.start({ workflow: SLEEPY });
    const runsDir = join(dir, 'runs');
    const log = (await readdir(runsDir)).find((name) => PROCESS_LOG_FILE.test(name));
    expect(log, 'the process log').to.be.a('string');
    expect(await readFile(join(runsDir, log!), 'utf8')).to.include(`"run_id": "${handle.runId}"`);
    // The file is written a journal commit later (the run is still running then).
    const deadline = Date.now() + 10_000;
    while ((await runFiles(runsDir)).length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const files = await runFiles(runsDir);
    expect(files.map((f) => f.record.status)).to.deep.equal(['running']);
    rt.cancel(handle.runId);
    await handle.done;
  });

  it('marks run files left running as interrupted by its start-up scan', async () => {
    const runsDir = join(dir, 'runs');
    const stale: RunRecord = startedRunRecord({
      runId: 'old',
      workflow: compileWorkflow({ name: 'echo', steps: [{ name: 'e', agent: 'tier0_echo' }] }),
      adapter: 'native',
      inputs: {},
      startTime: 0,
      extra: {},
    });
    await writeRunFile(runsDir, 'old.json', stale);
    // With resume: 'auto' (the default) the run would be resumed (see test/e2e/resume.test.ts).
    const rt = make({ resume: 'manual' });
    // Runs start at once; the scan goes on in the background and reports through `recovery`.
    expect((await rt.run({ workflow: ECHO })).status).to.equal('success');
    expect((await rt.recovery).recovered).to.deep.equal(['old.json']);
    const files = await runFiles(runsDir);
    const old = files.find((f) => f.name === 'old.json')!;
    expect(old.record).to.include({ status: 'failed', error: 'interrupted' });
  });

  it('validates documents, YAML and names without running them', async () => {
    const rt = make();
    expect(await rt.validate('echo')).to.include({ valid: true, name: 'echo', stepCount: 1 });
    const bad = await rt.validate({
      name: 'bad',
      steps: [{ name: 'a', agent: 'tier0_echo', depends_on: 'b' }],
    } as never);
    expect(bad).to.include({ valid: false, name: 'bad', stepCount: 1, workflow: undefined });
    expect(bad.errors[0]!.loc).to.deep.equal(['steps', 0, 'depends_on']);
    expect(await rt.listWorkflows()).to.deep.equal(['echo']);
    expect((await rt.getWorkflow('echo')).steps).to.have.length(1);
  });

  it('passes the inspector through: one system sees the run actors', async () => {
    const actorIds = new Set<string>();
    const rt = make({
      persist: false,
      inspect: (event: InspectionEvent) => {
        if (event.type === '@xstate.actor') actorIds.add((event.actorRef as AnyActorRef).id);
      },
    });
    const handle = await rt.start({ workflow: ECHO, runId: 'inspected' });
    await handle.done;
    expect([...actorIds]).to.include('run-inspected');
    expect([...actorIds]).to.include('engine');
  });

  it('shuts down: refuses new runs, waits, then cancels runs still active after the grace period', async () => {
    const clock = new TestClock(CLOCK_START);
    // Cancelled at the grace: with resume on, such a run is left to the next start instead.
    const rt = make({ clock, resume: 'off' });
    const started = nextEvent(
      (l) => rt.subscribe(l),
      (e) => e.type === 'step_start',
    );
    const handle = await rt.start({ workflow: SLEEPY });
    await started;
    const stopping = rt.shutdown({ graceMs: 5000 });
    const refused = await rejection<AppError>(rt.start({ workflow: ECHO }));
    expect(refused.code).to.equal(ERROR_CODES.RUNTIME_CLOSED);
    clock.increment(5000);
    await stopping;
    const record = await handle.done;
    expect(record).to.include({ status: 'failed', error: 'runtime shutting down' });
    expect(rt.activeRuns()).to.deep.equal([]);
    runtime = undefined;
  });
});

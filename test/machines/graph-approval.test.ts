import { expect } from 'chai';
import { join } from 'node:path';
import {
  createActor,
  createMachine,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type InspectionEvent,
} from 'xstate';
import { createRuntime } from '../../src/engine/runtime.js';
import type { Runtime } from '../../src/engine/types.js';
import { removeDir, tempDir } from '../conformance/helpers.js';
import type { AttemptResult, EngineInput } from '../../machines/engine-contract.js';
import {
  compileGraphLogic,
  graphImplementations,
  graphMachineDefinition,
} from '../../src/engine/adapters/graph.js';
import { GRAPH_CLOCK_START, ok, workflow } from './graph-helpers.js';
import { TestClock } from '../fixtures/test-clock.js';

interface JsonNode {
  description?: string;
  states?: Record<string, JsonNode>;
  always?: { target?: string; guard?: { type: string; params?: Record<string, unknown> } }[];
}

const wf = () =>
  workflow([
    { name: 'write', agent: 'tier0_tool', tools: ['file_write'] },
    { name: 'after', agent: 'tier0_echo', depends_on: ['write'] },
  ]);

/** An attempt of `write` that waits for approval, then for the test. */
interface Waiting {
  onApproval: (waiting: boolean) => void;
  resolve: (result: AttemptResult) => void;
  signal: AbortSignal;
}

function start(logic: object, attempts: Waiting[]) {
  const runAttempt: EngineInput['runAttempt'] = ({ step, onApproval, input, signal }) => {
    if (step.name !== 'write') return Promise.resolve(ok({ ...input }));
    return new Promise<AttemptResult>((resolve) => {
      expect(onApproval, 'a step with tools gets onApproval').to.be.a('function');
      onApproval!(true);
      attempts.push({ onApproval: onApproval!, resolve, signal });
    });
  };
  const actor = createActor(logic as AnyStateMachine, {
    input: {
      runId: 'run-1',
      workflow: wf(),
      inputs: {},
      maxConcurrency: 10,
      maxAttempts: 1,
      runAttempt,
      retryDelayMs: () => 5,
      clock: new TestClock(GRAPH_CLOCK_START),
    } satisfies EngineInput,
  });
  const seen: string[] = [];
  actor.subscribe((snapshot: AnyMachineSnapshot) => {
    const value = JSON.stringify(snapshot.value);
    if (seen.at(-1) !== value) seen.push(value);
  });
  const done = new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve() }));
  actor.start();
  return { actor, seen, done };
}

/** Resolves once `attempts` has an entry (the attempt starts on a later event). */
async function firstAttempt(attempts: Waiting[]): Promise<Waiting> {
  while (attempts.length === 0) await new Promise((resolve) => setImmediate(resolve));
  return attempts[0]!;
}

const paths = () => ({
  // The served JSON, loaded back with createMachine and the named implementations provided.
  generic: createMachine(JSON.parse(JSON.stringify(graphMachineDefinition(wf()))) as never).provide(
    graphImplementations() as never,
  ),
  runtime: compileGraphLogic(wf()),
});

describe('graph machine: awaiting_approval', () => {
  it('gives a step with tools an awaiting_approval state (running → awaiting_approval → running | failed), described, in the served JSON', () => {
    const json = JSON.parse(JSON.stringify(graphMachineDefinition(wf()))) as {
      states: { running: JsonNode };
    };
    const write = json.states.running.states!.write!;
    const waiting = write.states!.awaiting_approval!;
    expect(waiting.description).to.match(/file_write\) waits for the approval gate/);
    expect(waiting.description).to.match(/cancelling the run ends the wait/);
    expect(waiting.always!.map((t) => t.target)).to.deep.equal(['running', 'failed']);
    expect(write.states!.running!.always![0]).to.deep.include({
      target: 'awaiting_approval',
      guard: { type: 'stepIs', params: { step: 0, name: 'write', status: 'awaiting_approval' } },
    });
    // A step without tools never waits for approval: no such state.
    expect(json.states.running.states!.after!.states).to.not.have.property('awaiting_approval');
  });

  for (const path of ['generic', 'runtime'] as const) {
    it(`shows the step awaiting_approval while its call waits, then running and success (${path} path)`, async () => {
      const attempts: Waiting[] = [];
      const { seen, done } = start(paths()[path], attempts);
      const attempt = await firstAttempt(attempts);
      await new Promise((resolve) => setImmediate(resolve));
      expect(seen.at(-1)).to.equal(
        JSON.stringify({ running: { write: 'awaiting_approval', after: 'pending' } }),
      );
      attempt.onApproval(false);
      attempt.resolve(ok({ written: true }));
      await done;
      expect(seen).to.deep.equal([
        JSON.stringify({ running: { write: 'pending', after: 'pending' } }),
        JSON.stringify({ running: { write: 'running', after: 'pending' } }),
        JSON.stringify({ running: { write: 'awaiting_approval', after: 'pending' } }),
        JSON.stringify({ running: { write: 'running', after: 'pending' } }),
        JSON.stringify({ running: { write: 'success', after: 'running' } }),
        JSON.stringify({ running: { write: 'success', after: 'success' } }),
        JSON.stringify('completed'),
      ]);
    });

    it(`fails the waiting step when the run is aborted, and aborts the attempt's signal (${path} path)`, async () => {
      const attempts: Waiting[] = [];
      const { actor, seen, done } = start(paths()[path], attempts);
      const attempt = await firstAttempt(attempts);
      await new Promise((resolve) => setImmediate(resolve));
      actor.send({ type: 'engine.abort', reason: 'cancelled' });
      await done;
      expect(seen).to.include(
        JSON.stringify({ running: { write: 'awaiting_approval', after: 'pending' } }),
      );
      expect(seen.at(-1)).to.equal(JSON.stringify('aborted'));
      expect(attempt.signal.aborted).to.equal(true);
      const { run } = actor.getSnapshot().context as {
        run: { output(): { outcomes: { status: string; error: string }[] } };
      };
      const output = run.output();
      expect(output.outcomes.map((o) => o.status)).to.deep.equal(['failed', 'skipped']);
      expect(output.outcomes[0]!.error).to.equal('cancelled');
    });
  }
});

describe('graph machine: awaiting_approval in a live run (inspector)', () => {
  let dir: string;
  let runtime: Runtime | undefined;
  beforeEach(async () => {
    dir = await tempDir('agentic-approval-inspect-');
  });
  afterEach(async () => {
    await runtime?.shutdown({ graceMs: 1000 });
    runtime = undefined;
    await removeDir(dir);
  });

  it('shows the step region go running → awaiting_approval → running → success while a person approves', async () => {
    const seen: string[] = [];
    const inspect = (event: InspectionEvent) => {
      if (event.type !== '@xstate.snapshot') return;
      const snapshot = event.snapshot as Partial<AnyMachineSnapshot>;
      const regions = (snapshot.value as { running?: Record<string, string> } | undefined)?.running;
      if (snapshot.machine === undefined || typeof regions !== 'object') return;
      const state = regions.write;
      if (state !== undefined && seen.at(-1) !== state) seen.push(state);
    };
    runtime = createRuntime({
      runsDir: join(dir, 'runs'),
      workflowsDir: join(dir, 'wf'),
      persist: false,
      defaultAdapter: 'graph',
      noLlm: true,
      tools: { fileBaseDir: dir, approval: 'http' },
      inspect,
    });
    const live = runtime;
    const required = new Promise<string>((resolve) => {
      const off = live.subscribe((event) => {
        if (event.type !== 'approval_required') return;
        off();
        resolve(event.call_id);
      });
    });
    const record = live.run({
      workflow: [
        'name: inspect_approval',
        'steps:',
        '  - name: write',
        '    agent: tier1_writer',
        '    tools: [file_write]',
        '    inputs:',
        '      placeholder_tool_calls: [[{ tool: file_write, args: { path: a.txt, content: x } }]]',
        '',
      ].join('\n'),
    });
    const callId = await required;
    expect(seen.at(-1)).to.equal('awaiting_approval');
    expect(live.approvals.answer(callId, true)).to.equal('decided');
    expect((await record).status).to.equal('success');
    expect(seen).to.deep.equal(['pending', 'running', 'awaiting_approval', 'running', 'success']);
  });
});

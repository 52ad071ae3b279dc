// The graph engine's snapshots are values (machines/graph.logic.ts): each transition gives a new
// snapshot, no later transition changes an earlier one (value, configuration), nothing writes
// XState internals, and what XState's own functions read is XState's resolution of the value.
import { expect } from 'chai';
import {
  createActor,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type StateValue,
} from 'xstate';
import type { AttemptRunner, EngineInput, EngineOutput } from '../../machines/engine-contract.js';
import { compileGraphLogic } from '../../src/engine/adapters/graph.js';
import type { CompiledWorkflow } from '../../src/workflow/types.js';
import { failed, GRAPH_CLOCK_START, ok, workflow } from './graph-helpers.js';
import { TestClock } from '../fixtures/test-clock.js';

/** How many times the tool step's attempt waits for approval (over 64 region moves). */
const WAITS = 40;

/** A diamond with a retry, a skip, and a step with tools whose calls wait for approval often. */
const wf = () =>
  workflow([
    { name: 'a', agent: 'tier0_echo' },
    { name: 'tool', agent: 'tier0_tool', tools: ['file_write'], depends_on: ['a'] },
    { name: 'flaky', agent: 'tier0_echo', depends_on: ['a'], max_attempts: 2 },
    { name: 'never', agent: 'tier0_echo', depends_on: ['a'], when: '${inputs.go == true}' },
    { name: 'join', agent: 'tier0_echo', depends_on: ['tool', 'flaky', 'never'] },
  ]);

const runAttempt: AttemptRunner = async ({ step, attempt, onApproval, input }) => {
  if (step.name === 'tool')
    for (let i = 0; i < WAITS; i++) {
      onApproval?.(true);
      await new Promise((resolve) => setImmediate(resolve));
      onApproval?.(false);
    }
  if (step.name === 'flaky' && attempt === 1) return failed('flaky');
  return ok({ ...input });
};

interface Seen {
  snapshot: AnyMachineSnapshot;
  /** The value as it was when the snapshot was delivered. */
  json: string;
}

/** Runs the graph engine; `onSnapshot` sees each snapshot as it is delivered. */
async function run(
  workflowOf: CompiledWorkflow,
  onSnapshot: (snapshot: AnyMachineSnapshot) => void = () => undefined,
  logic = compileGraphLogic(workflowOf),
) {
  const clock = new TestClock(GRAPH_CLOCK_START);
  const input: EngineInput = {
    runId: 'run-1',
    workflow: workflowOf,
    inputs: { go: false },
    maxConcurrency: 10,
    maxAttempts: 1,
    runAttempt,
    retryDelayMs: () => 5,
    clock,
  };
  const actor = createActor(logic as unknown as AnyStateMachine, { input });
  const seen: Seen[] = [];
  actor.subscribe((snapshot: AnyMachineSnapshot) => {
    seen.push({ snapshot, json: JSON.stringify(snapshot.value) });
    onSnapshot(snapshot);
    if (clock.pending() > 0) setImmediate(() => clock.fireAll());
  });
  const done = new Promise<EngineOutput>((resolve, reject) =>
    actor.subscribe({
      complete: () => resolve(actor.getSnapshot().output as EngineOutput),
      error: reject,
    }),
  );
  actor.start();
  const output = await done;
  return { seen, output, logic };
}

/** Freezes `value` and everything it holds (plain objects and arrays). */
function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}

describe('graph engine snapshots', () => {
  it('gives each transition a new snapshot whose value later transitions do not change', async () => {
    const { seen, output } = await run(wf());
    expect(output.outcomes.map((o) => o.status)).to.deep.equal([
      'success',
      'success',
      'success',
      'skipped',
      'success',
    ]);
    const running = seen.filter((s) => typeof s.snapshot.value === 'object');
    // Over 64 region moves: the run's log began a new segment on the way.
    expect(running.length).to.be.above(2 * WAITS);
    expect(running.map((s) => s.json)).to.include(
      JSON.stringify({
        running: {
          a: 'success',
          tool: 'awaiting_approval',
          flaky: 'success',
          never: 'skipped',
          join: 'pending',
        },
      }),
    );
    // Read again after the run: every snapshot still shows its own state.
    expect(seen.map((s) => JSON.stringify(s.snapshot.value))).to.deep.equal(
      seen.map((s) => s.json),
    );
    for (let i = 1; i < running.length; i++) {
      const before = running[i - 1]!.snapshot;
      const after = running[i]!.snapshot;
      expect(after).not.to.equal(before);
      expect(after.value).not.to.equal(before.value);
      expect((after.value as { running: object }).running).not.to.equal(
        (before.value as { running: object }).running,
      );
      expect(after._nodes).not.to.equal(before._nodes);
    }
  });

  it('runs with every delivered snapshot frozen (nothing writes a snapshot, its value or _nodes)', async () => {
    const plain = await run(wf());
    const frozen = await run(wf(), (snapshot) => {
      deepFreeze(snapshot.value);
      Object.freeze(snapshot._nodes);
      Object.freeze(snapshot.context);
      Object.freeze(snapshot);
    });
    expect(frozen.seen.map((s) => s.json)).to.deep.equal(plain.seen.map((s) => s.json));
    expect(frozen.output.outcomes.map((o) => o.status)).to.deep.equal(
      plain.output.outcomes.map((o) => o.status),
    );
  });

  it("reads XState's resolution of the value: _nodes, tags, matches, can, getMeta, toJSON", async () => {
    const checked: string[] = [];
    const { logic } = await run(wf(), (snapshot) => {
      if (typeof snapshot.value !== 'object') return;
      const resolved: AnyMachineSnapshot = (snapshot.machine as AnyStateMachine).resolveState({
        value: snapshot.value as StateValue,
        context: snapshot.context as Record<string, unknown>,
      });
      expect(new Set(snapshot._nodes)).to.deep.equal(new Set(resolved._nodes));
      expect([...snapshot.tags]).to.deep.equal([...resolved.tags]);
      expect(snapshot.getMeta()).to.deep.equal(resolved.getMeta());
      expect(snapshot.can({ type: 'engine.abort' })).to.equal(true);
      expect(snapshot.matches({ running: { a: 'pending' } })).to.equal(
        resolved.matches({ running: { a: 'pending' } }),
      );
      expect(JSON.stringify(snapshot)).to.equal(JSON.stringify(resolved));
      checked.push(JSON.stringify(snapshot.value));
    });
    expect(checked.length).to.be.above(5);
    expect(logic.machine.id).to.equal('graph_wf');
  });

  it('resolves no configuration during a run nobody reads (a step event stays O(1))', async () => {
    const logic = compileGraphLogic(wf());
    const resolved: unknown[] = [];
    const resolveState = logic.machine.resolveState.bind(logic.machine);
    logic.machine.resolveState = (config: Parameters<typeof resolveState>[0]) => {
      resolved.push(config.value);
      return resolveState(config);
    };
    const { output } = await run(wf(), () => undefined, logic);
    expect(output.outcomes).to.have.length(5);
    // Only the final state, whose value is one word.
    expect(resolved).to.deep.equal(['completed']);
  });
});

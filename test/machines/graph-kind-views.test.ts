/**
 * How the graph machine shows the step kinds whose work lives outside it (docs/engine.md, "Kinds
 * in the machine"): a sub-workflow step's child run is the invoked child of its `running` state
 * (the JSON's `invoke`, the live snapshot's `children`), and a map step's item counter lives in
 * the snapshot's `context.items.<step>`, moved by `step.items` (the JSON's `countItems`).
 *
 * At machine level, with the events the runtime sends (`step.child`, `step.items`) sent by the
 * test's attempt runner; `test/conformance/sub-workflow.conformance.test.ts` and
 * `test/conformance/map.conformance.test.ts` check them through the real runtime.
 */
import { expect } from 'chai';
import {
  createActor,
  createMachine,
  fromPromise,
  type AnyActorRef,
  type AnyMachineSnapshot,
  type AnyStateMachine,
} from 'xstate';
import type { AttemptResult, EngineInput } from '../../machines/engine-contract.js';
import {
  compileGraphLogic,
  graphImplementations,
  graphMachineDefinition,
} from '../../src/engine/adapters/graph.js';
import { TestClock } from '../fixtures/test-clock.js';
import { GRAPH_CLOCK_START, ok, workflow } from './graph-helpers.js';

const mapWorkflow = () =>
  workflow([
    { name: 'list', agent: 'tier0_echo' },
    {
      name: 'each',
      for_each: '${steps.list.outputs.files}',
      as: 'file',
      agent: 'tier0_echo',
      depends_on: ['list'],
    },
  ]);

const callWorkflow = () =>
  workflow([
    { name: 'call', workflow: 'child' },
    { name: 'after', agent: 'tier0_echo', depends_on: ['call'] },
  ]);

function inputOf(wf: EngineInput['workflow'], runAttempt: EngineInput['runAttempt']): EngineInput {
  return {
    runId: 'run-1',
    workflow: wf,
    inputs: {},
    maxConcurrency: 10,
    maxAttempts: 1,
    runAttempt,
    retryDelayMs: () => 5,
    clock: new TestClock(GRAPH_CLOCK_START),
  };
}

/** What the tests read of a graph snapshot. */
interface Snap {
  value: unknown;
  context: { items?: Record<string, unknown> };
  children: Record<string, unknown>;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('graph machine: the kinds whose work lives in their executor', () => {
  describe('a map step: a region with a counter', () => {
    it('says in the JSON where the counter lives: meta.map.counter, step.items → countItems', () => {
      const json = graphMachineDefinition(mapWorkflow()) as {
        states: { running: { on: Record<string, unknown>; states: Record<string, unknown> } };
      };
      const region = json.states.running.states.each as { meta: { map: Record<string, unknown> } };
      expect(region.meta.map).to.include({ counter: 'context.items.each' });
      expect(json.states.running.on['step.items']).to.deep.include({
        actions: [{ type: 'countItems' }],
      });
      const list = json.states.running.states.list as { meta: Record<string, unknown> };
      expect(list.meta).to.not.have.property('map');
    });

    for (const path of ['generic', 'runtime'] as const) {
      it(`shows the counts in each snapshot's context.items, each snapshot its own (${path} path)`, async () => {
        const wf = mapWorkflow();
        const engine: { ref?: AnyActorRef } = {};
        const settle: ((result: AttemptResult) => void)[] = [];
        const runAttempt: EngineInput['runAttempt'] = (request) => {
          if (request.step.name !== 'each') return Promise.resolve(ok({ files: ['a', 'b', 'c'] }));
          // What the runtime sends as the map's items settle (run-session.ts).
          const counts = (done: number, running: number) =>
            engine.ref!.send({
              type: 'step.items',
              index: 1,
              items: { total: 3, done, failed: 0, running },
            });
          counts(0, 3);
          return new Promise<AttemptResult>((resolve) => {
            settle.push(() => {
              counts(3, 0);
              resolve(ok({ results: [], failed: 0 }));
            });
            counts(2, 1);
          });
        };
        const machine =
          path === 'generic'
            ? createMachine(
                JSON.parse(JSON.stringify(graphMachineDefinition(wf))) as never,
              ).provide(graphImplementations() as never)
            : (compileGraphLogic(wf) as unknown as AnyStateMachine);
        const actor = createActor(machine, { input: inputOf(wf, runAttempt) });
        engine.ref = actor;
        const snapshots: Snap[] = [];
        actor.subscribe((snapshot: AnyMachineSnapshot) => snapshots.push(snapshot as Snap));
        const done = new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve() }));
        actor.start();
        while (settle.length === 0) await turn();
        const live = actor.getSnapshot() as Snap;
        expect(live.value).to.deep.equal({ running: { list: 'success', each: 'running' } });
        expect(live.context.items).to.deep.equal({
          each: { total: 3, done: 2, failed: 0, running: 1 },
        });
        settle[0]!(ok({}));
        await done;
        const counters = snapshots
          .map((snapshot) => snapshot.context.items?.each)
          .filter((items, i, all) => items !== undefined && items !== all[i - 1]);
        expect(counters).to.deep.equal([
          { total: 3, done: 0, failed: 0, running: 3 },
          { total: 3, done: 2, failed: 0, running: 1 },
          { total: 3, done: 3, failed: 0, running: 0 },
        ]);
        // Values: an earlier snapshot still reads the counts it had.
        expect(Object.isFrozen(live.context.items)).to.equal(true);
        expect(live.context.items?.each).to.deep.equal({
          total: 3,
          done: 2,
          failed: 0,
          running: 1,
        });
      });
    }
  });

  describe('a sub-workflow step: the child run as the invoked child of its running state', () => {
    it('declares the invoke in the JSON: id child:<step>, src workflowRun, the child workflow', () => {
      const json = graphMachineDefinition(callWorkflow()) as {
        states: { running: { states: Record<string, { states: Record<string, unknown> }> } };
      };
      const call = json.states.running.states.call!.states;
      expect((call.running as { invoke: unknown[] }).invoke).to.deep.equal([
        {
          id: 'child:call',
          src: 'workflowRun',
          input: { step: 'call', workflow: 'child' },
          description:
            "The child run of workflow 'child' (its own run id and run file), started by the step's executor; the step settles with it.",
        },
      ]);
      for (const state of ['pending', 'retrying'])
        expect(call[state]).to.not.have.property('invoke');
      const after = json.states.running.states.after!.states;
      expect(after.running).to.not.have.property('invoke');
    });

    it('lists the child in the live snapshot while it runs, under the invoke id; not after it ended (runtime path)', async () => {
      const wf = callWorkflow();
      const engine: { ref?: AnyActorRef } = {};
      let finish!: (output: Record<string, unknown>) => void;
      let child: AnyActorRef | undefined;
      const runAttempt: EngineInput['runAttempt'] = async (request) => {
        if (request.step.name !== 'call') return ok({});
        // What the runtime does for a child run (runtime.ts): its actor is the engine's child,
        // with the invoke's id, announced with step.child; it ends before the step settles.
        const ended = new Promise<Record<string, unknown>>((resolve) => (finish = resolve));
        child = createActor(
          fromPromise(() => ended),
          { parent: engine.ref!, id: 'child:call' },
        );
        engine.ref!.send({ type: 'step.child', index: 0, child });
        child.start();
        const output = await ended;
        await turn();
        return ok(output);
      };
      const actor = createActor(compileGraphLogic(wf) as unknown as AnyStateMachine, {
        input: inputOf(wf, runAttempt),
      });
      engine.ref = actor;
      const seen: string[][] = [];
      actor.subscribe((snapshot: AnyMachineSnapshot) => {
        const keys = Object.keys((snapshot as Snap).children);
        if (JSON.stringify(seen.at(-1)) !== JSON.stringify(keys)) seen.push(keys);
      });
      const done = new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve() }));
      actor.start();
      while (child === undefined) await turn();
      const live = actor.getSnapshot() as Snap;
      expect(live.value).to.deep.equal({ running: { call: 'running', after: 'pending' } });
      expect(live.children['child:call']).to.equal(child);
      expect(Object.isFrozen(live.children)).to.equal(true);
      // The inspector's view of the child: its parent is the engine actor.
      expect((child as unknown as { _parent?: AnyActorRef })._parent).to.equal(actor);
      finish({ shout: 'HI' });
      await done;
      expect(seen).to.deep.equal([[], ['child:call'], []]);
      // The snapshot read while it ran still lists it (snapshots are values).
      expect(Object.keys(live.children)).to.deep.equal(['child:call']);
    });

    it('ignores step.child for a step that is not running (a late child is not listed)', async () => {
      const wf = callWorkflow();
      const actor = createActor(compileGraphLogic(wf) as unknown as AnyStateMachine, {
        input: inputOf(wf, () => Promise.resolve(ok({}))),
      });
      const done = new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve() }));
      actor.start();
      const late = createActor(
        fromPromise(() => new Promise<never>(() => undefined)),
        { parent: actor, id: 'child:after' },
      );
      actor.send({ type: 'step.child', index: 1, child: late });
      expect((actor.getSnapshot() as Snap).children).to.deep.equal({});
      await done;
    });
  });
});

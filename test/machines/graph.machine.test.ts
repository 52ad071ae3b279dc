import { expect } from 'chai';
import { createActor, createMachine, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate';
import type { EngineInput, EngineOutput } from '../../machines/engine-contract.js';
import {
  createGraphAdapter,
  graphImplementations,
  graphMachineDefinition,
} from '../../src/engine/adapters/graph.js';
import { REGION_STATES } from '../../machines/graph.machine.js';
import { echoRunner, failed, GRAPH_CLOCK_START, ok, workflow } from './graph-helpers.js';
import { TestClock } from '../fixtures/test-clock.js';

interface JsonTransition {
  target?: string;
  guard?: { type: string; params?: Record<string, unknown> };
  actions?: unknown[];
  description?: string;
}
interface JsonNode {
  description?: string;
  type?: string;
  initial?: string;
  meta?: Record<string, unknown>;
  states?: Record<string, JsonNode>;
  always?: JsonTransition[];
  on?: Record<string, JsonTransition | JsonTransition[]>;
}

function allNodes(node: JsonNode, path: string, out: [string, JsonNode][]): void {
  out.push([path, node]);
  for (const [key, child] of Object.entries(node.states ?? {}))
    allNodes(child, `${path}.${key}`, out);
}

const diamond = () =>
  workflow([
    { name: 'a', agent: 'tier0_echo', description: 'Fetches the ticket.' },
    { name: 'b', agent: 'tier0_echo', depends_on: ['a'], description: 'Checks it!' },
    { name: 'c', agent: 'tier0_echo', depends_on: ['a'], when: '${inputs.go == true}' },
    { name: 'd', agent: 'tier0_echo', depends_on: ['b', 'c'] },
  ]);

const STEP_STATES = ['pending', 'running', 'retrying', 'success', 'failed', 'skipped'];

function input(wf: ReturnType<typeof diamond>, overrides: Partial<EngineInput> = {}): EngineInput {
  return {
    runId: 'run-1',
    workflow: wf,
    inputs: { go: true },
    maxConcurrency: 10,
    maxAttempts: 1,
    runAttempt: echoRunner,
    retryDelayMs: () => 5,
    clock: new TestClock(GRAPH_CLOCK_START),
    ...overrides,
  };
}

describe('graph compiler', () => {
  it('compiles a parallel region per step: pending → running ⇄ retrying → success | failed | skipped', () => {
    const json = graphMachineDefinition(diamond()) as JsonNode;
    const running = json.states!.running!;
    expect(running.type).to.equal('parallel');
    expect(Object.keys(running.states!)).to.deep.equal(['a', 'b', 'c', 'd']);
    for (const region of Object.values(running.states!)) {
      expect(region.initial).to.equal('pending');
      expect(Object.keys(region.states!)).to.deep.equal(STEP_STATES);
      for (const final of ['success', 'failed', 'skipped'])
        expect(region.states![final]!.type).to.equal('final');
      expect(region.states!.running!.always!.map((t) => t.target)).to.deep.equal([
        'retrying',
        'success',
        'failed',
      ]);
      expect(region.states!.retrying!.always!.map((t) => t.target)).to.deep.equal([
        'running',
        'failed',
      ]);
    }
    // Few event types, the same for every workflow: nothing grows with (nodes × event types).
    expect(Object.keys(running.on!)).to.deep.equal([
      'engine.start',
      'step.settled',
      'step.retry',
      'step.iteration',
      'step.approval',
      'engine.finished',
      'engine.abort',
    ]);
  });

  it('gives every state node a description saying what the step does and waits for', () => {
    const json = graphMachineDefinition(diamond()) as JsonNode;
    const nodes: [string, JsonNode][] = [];
    allNodes(json, 'root', nodes);
    expect(nodes.filter(([, node]) => !node.description).map(([path]) => path)).to.deep.equal([]);
    const regions = json.states!.running!.states!;
    expect(regions.a!.description).to.equal('Step "a" runs agent tier0_echo: Fetches the ticket.');
    expect(regions.b!.description).to.equal('Step "b" runs agent tier0_echo: Checks it!');
    expect(regions.d!.description).to.equal('Step "d" runs agent tier0_echo.');
    expect(regions.a!.states!.pending!.description).to.match(
      /^Depends on no other step: ready as soon as the run starts\./,
    );
    expect(regions.b!.states!.pending!.description).to.match(
      /^Waits for step "a" to finish; if it fails, this step is skipped\./,
    );
    expect(regions.d!.states!.pending!.description).to.match(
      /^Waits for steps "b" and "c" to all finish; if one fails, this step is skipped\./,
    );
    expect(regions.c!.states!.pending!.description).to.contain(
      'Once ready, runs only if ${inputs.go == true} holds, else it is skipped.',
    );
    expect(regions.a!.states!.success!.description).to.contain('Next: "b" and "c" may start');
    const texts = nodes.map(([, node]) => node.description!).join('\n');
    expect(texts).not.to.match(/\.\./);
    expect(texts).not.to.contain('Join');
  });

  it('names the depends_on and when: conditions in readable guards', () => {
    const regions = (graphMachineDefinition(diamond()) as JsonNode).states!.running!.states!;
    const pendingC = regions.c!.states!.pending!.always!;
    expect(pendingC.map((t) => [t.target, t.guard?.type])).to.deep.equal([
      ['running', 'ready'],
      ['skipped', 'conditionFalse'],
      ['skipped', 'stepIs'],
      ['failed', 'stepIs'],
    ]);
    expect(pendingC[0]!.guard!.params).to.deep.equal({
      step: 2,
      name: 'c',
      dependsOn: ['a'],
      when: '${inputs.go == true}',
    });
    expect(regions.d!.states!.pending!.always![0]!.guard!.params).to.deep.equal({
      step: 3,
      name: 'd',
      dependsOn: ['b', 'c'],
    });
    expect(regions.d!.meta).to.deep.equal({
      step: 'd',
      kind: 'agent',
      agent: 'tier0_echo',
      dependsOn: ['b', 'c'],
      dependents: [],
    });
  });

  it('serves JSON that createMachine loads and starts with the named guards and actions provided', async () => {
    const wf = diamond();
    const json = JSON.parse(JSON.stringify(graphMachineDefinition(wf))) as object;
    const machine = createMachine(json as never).provide(graphImplementations() as never);
    const values: unknown[] = [];
    const actor = createActor(machine, { input: input(wf, { inputs: { go: false } }) });
    actor.subscribe((snapshot: AnyMachineSnapshot) => values.push(snapshot.value));
    const done = new Promise<void>((resolve) =>
      actor.subscribe({ complete: () => resolve(), error: () => resolve() }),
    );
    actor.start();
    await done;
    expect(actor.getSnapshot().status).to.equal('done');
    expect(actor.getSnapshot().value).to.equal('completed');
    const states = values.filter((v) => typeof v === 'object') as {
      running: Record<string, string>;
    }[];
    expect(states.slice(0, 2)).to.deep.equal([
      { running: { a: 'pending', b: 'pending', c: 'pending', d: 'pending' } },
      { running: { a: 'running', b: 'pending', c: 'pending', d: 'pending' } },
    ]);
    expect(states.at(-1)).to.deep.equal({
      running: { a: 'success', b: 'success', c: 'skipped', d: 'success' },
    });
  });

  it('moves the same regions through the runtime path as through generic XState', async () => {
    const wf = workflow([
      { name: 'a', agent: 'tier0_echo' },
      { name: 'b', agent: 'tier0_echo', depends_on: ['a'], max_attempts: 2 },
      { name: 'c', agent: 'tier0_echo', depends_on: ['a'], when: '${inputs.go == true}' },
      { name: 'e', agent: 'tier0_echo', depends_on: ['a'], max_attempts: 1 },
      { name: 'f', agent: 'tier0_echo', depends_on: ['e'] },
      { name: 'd', agent: 'tier0_echo', depends_on: ['b', 'c'] },
    ]);
    const attempts = new Map<string, number>();
    const runAttempt: EngineInput['runAttempt'] = ({ step, input: stepInput }) => {
      const n = (attempts.get(step.name) ?? 0) + 1;
      attempts.set(step.name, n);
      if (step.name === 'b' && n === 1) return Promise.resolve(failed('flaky'));
      if (step.name === 'e') return Promise.resolve(failed('broken'));
      return Promise.resolve(ok({ ...stepInput }));
    };
    const record = async (logic: object) => {
      attempts.clear();
      const clock = new TestClock(GRAPH_CLOCK_START);
      const actor = createActor(logic as AnyStateMachine, {
        input: input(wf, { inputs: { go: false }, runAttempt, clock }),
      });
      const seen: string[] = [];
      actor.subscribe((snapshot: AnyMachineSnapshot) => {
        seen.push(JSON.stringify(snapshot.value));
        if (clock.pending() > 0) setImmediate(() => clock.fireAll());
      });
      const output = new Promise<EngineOutput>((resolve) =>
        actor.subscribe({ complete: () => resolve(actor.getSnapshot().output as EngineOutput) }),
      );
      actor.start();
      return { seen, output: await output };
    };
    const generic = createMachine(graphMachineDefinition(wf) as never).provide(
      graphImplementations() as never,
    );
    const viaGeneric = await record(generic);
    const viaRuntime = await record(
      (await import('../../src/engine/adapters/graph.js')).compileGraphLogic(wf),
    );
    expect(viaRuntime.seen).to.deep.equal(viaGeneric.seen);
    expect(viaRuntime.seen).to.include(
      JSON.stringify({
        running: {
          a: 'success',
          b: 'retrying',
          c: 'skipped',
          e: 'failed',
          f: 'skipped',
          d: 'pending',
        },
      }),
    );
    expect(viaRuntime.output.outcomes.map((o) => o.status)).to.deep.equal([
      'success',
      'success',
      'skipped',
      'failed',
      'skipped',
      'success',
    ]);
  });

  it("compiles a workflow once per runtime's adapter and reuses the machine", () => {
    const wf = diamond();
    const adapter = createGraphAdapter();
    expect(adapter.compile(wf).machine).to.equal(adapter.compile(wf).machine);
    // Owned by the adapter (so by its runtime), not by the module.
    expect(createGraphAdapter().compile(wf)).not.to.equal(adapter.compile(wf));
  });

  it('builds each region from REGION_STATES: a state per row the step has, entered from the rows its from names', () => {
    const wf = workflow([
      { name: 'plain', agent: 'tier0_echo' },
      { name: 'tool', agent: 'tier0_tool', tools: ['file_write'] },
      {
        name: 'ask',
        human: {
          prompt: 'ok?',
          schema: { type: 'object', properties: { ok: { type: 'boolean' } } },
        },
      },
    ]);
    const regions = (graphMachineDefinition(wf) as JsonNode).states!.running!.states!;
    const without = (...states: string[]) =>
      REGION_STATES.filter((r) => !states.includes(r.state)).map((r) => r.state);
    expect(Object.keys(regions.tool!.states!)).to.deep.equal(without('awaiting_input'));
    expect(Object.keys(regions.ask!.states!)).to.deep.equal(without('awaiting_approval'));
    expect(Object.keys(regions.plain!.states!)).to.deep.equal(
      without('awaiting_approval', 'awaiting_input'),
    );
    for (const row of REGION_STATES) {
      const region = row.state === 'awaiting_input' ? regions.ask! : regions.tool!;
      for (const [from] of row.from ?? [])
        expect(region.states![from]!.always![0]!.target).to.equal(row.state);
      expect(region.states![row.state]!.type === 'final').to.equal(row.final === true);
    }
    // Every transition of every region leads to a state of that region.
    for (const region of Object.values(regions)) {
      const names = Object.keys(region.states!);
      for (const state of Object.values(region.states!))
        for (const t of state.always ?? []) expect(names).to.include(t.target);
    }
  });
});

/**
 * The graph machine of a workflow with a human step: its region has an `awaiting_input` state
 * (in the served JSON, described), and a live run shows the step there while its question waits,
 * on both paths (the served JSON loaded back with createMachine, and the runtime's logic), with
 * the real human executor asking and a real inbox answering.
 */
import { expect } from 'chai';
import { createActor, createMachine, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate';
import type { EngineInput } from '../../machines/engine-contract.js';
import {
  compileGraphLogic,
  graphImplementations,
  graphMachineDefinition,
} from '../../src/engine/adapters/graph.js';
import { createHumanExecutor, humanRequestId } from '../../src/engine/kinds/human.js';
import { createHumanInbox } from '../../src/engine/kinds/human-inbox.js';
import { TestClock } from '../fixtures/test-clock.js';
import { GRAPH_CLOCK_START, ok, workflow } from './graph-helpers.js';

interface JsonNode {
  description?: string;
  states?: Record<string, JsonNode>;
  always?: { target?: string; guard?: { type: string; params?: Record<string, unknown> } }[];
}

const wf = () =>
  workflow([
    {
      name: 'ask',
      human: {
        prompt: 'Go?',
        schema: { type: 'object', properties: { go: { type: 'boolean' } } },
      },
    },
    { name: 'after', agent: 'tier0_echo', depends_on: ['ask'] },
  ]);

const paths = () => ({
  generic: createMachine(JSON.parse(JSON.stringify(graphMachineDefinition(wf()))) as never).provide(
    graphImplementations() as never,
  ),
  runtime: compileGraphLogic(wf()),
});

describe('graph machine: awaiting_input (human steps)', () => {
  it('gives a human step an awaiting_input state, described, in the served JSON; meta.kind human', () => {
    const json = JSON.parse(JSON.stringify(graphMachineDefinition(wf()))) as {
      states: { running: { states: Record<string, JsonNode & { meta?: unknown }> } };
    };
    const ask = json.states.running.states.ask!;
    expect(ask.meta).to.deep.include({ step: 'ask', kind: 'human', agent: 'human' });
    expect(ask.description).to.match(/^Step "ask" asks a person/);
    const waiting = ask.states!.awaiting_input!;
    expect(waiting.description).to.match(/waits for a person: listed by GET \/api\/approvals/);
    expect(waiting.always!.map((t) => t.target)).to.deep.equal(['success', 'failed', 'running']);
    expect(ask.states!.running!.always![0]).to.deep.include({
      target: 'awaiting_input',
      guard: { type: 'stepIs', params: { step: 0, name: 'ask', status: 'awaiting_input' } },
    });
    expect(ask.states).to.not.have.property('awaiting_approval');
    expect(json.states.running.states.after!.states).to.not.have.property('awaiting_input');
  });

  for (const path of ['generic', 'runtime'] as const) {
    it(`shows the step awaiting_input while its question waits, then success with the answer (${path} path)`, async () => {
      const inbox = createHumanInbox();
      const clock = new TestClock(GRAPH_CLOCK_START);
      const human = createHumanExecutor({
        runId: 'run-1',
        workflow: 'wf',
        inbox,
        clock,
        emit: () => undefined,
      });
      const runAttempt: EngineInput['runAttempt'] = (request) =>
        request.step.kind === 'human' ? human(request) : Promise.resolve(ok({ ...request.input }));
      const actor = createActor(paths()[path] as AnyStateMachine, {
        input: {
          runId: 'run-1',
          workflow: wf(),
          inputs: {},
          maxConcurrency: 10,
          maxAttempts: 1,
          runAttempt,
          retryDelayMs: () => 5,
          clock,
        } satisfies EngineInput,
      });
      const seen: string[] = [];
      actor.subscribe((snapshot: AnyMachineSnapshot) => {
        const value = JSON.stringify(snapshot.value);
        if (seen.at(-1) !== value) seen.push(value);
      });
      const done = new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve() }));
      actor.start();
      const waiting = JSON.stringify({ running: { ask: 'awaiting_input', after: 'pending' } });
      while (seen.at(-1) !== waiting) await new Promise((resolve) => setImmediate(resolve));
      expect(inbox.answer(humanRequestId('run-1', 'ask'), { go: true })).to.equal('decided');
      await done;
      expect(seen).to.deep.equal([
        JSON.stringify({ running: { ask: 'pending', after: 'pending' } }),
        JSON.stringify({ running: { ask: 'running', after: 'pending' } }),
        waiting,
        JSON.stringify({ running: { ask: 'running', after: 'pending' } }),
        JSON.stringify({ running: { ask: 'success', after: 'running' } }),
        JSON.stringify({ running: { ask: 'success', after: 'success' } }),
        JSON.stringify('completed'),
      ]);
      const { run } = actor.getSnapshot().context as {
        run: { output(): { outcomes: { status: string; output: unknown }[] } };
      };
      expect(run.output().outcomes[0]).to.deep.include({ status: 'success', output: { go: true } });
    });
  }
});

import { expect } from 'chai';
import { compileGraphMachine, graphMachineDefinition } from '../../src/engine/adapters/graph.js';
import { workflow } from './graph-helpers.js';

interface JsonNode {
  description?: string;
  type?: string;
  states?: Record<string, JsonNode>;
  on?: Record<
    string,
    {
      target?: string[];
      guard?: { type: string };
      actions: unknown[];
      description?: string;
      meta?: Record<string, unknown>;
    }[]
  >;
}

function allNodes(node: JsonNode, path: string, out: [string, JsonNode][]): void {
  out.push([path, node]);
  for (const [key, child] of Object.entries(node.states ?? {}))
    allNodes(child, `${path}.${key}`, out);
}

const diamond = () =>
  workflow([
    { name: 'a', agent: 'tier0_echo' },
    { name: 'b', agent: 'tier0_echo', depends_on: ['a'] },
    { name: 'c', agent: 'tier0_echo', depends_on: ['a'], when: '${inputs.go == true}' },
    { name: 'd', agent: 'tier0_echo', depends_on: ['b', 'c'] },
  ]);

describe('graph compiler', () => {
  it('gives every state node and every transition a description', () => {
    const json = graphMachineDefinition(diamond()) as JsonNode;
    const nodes: [string, JsonNode][] = [];
    allNodes(json, 'root', nodes);
    const missing = nodes.filter(([, node]) => !node.description).map(([path]) => path);
    expect(missing).to.deep.equal([]);
    expect(nodes.map(([path]) => path)).to.deep.equal([
      'root',
      'root.running',
      'root.completed',
      'root.aborted',
    ]);
    expect(json.states!.completed!.type).to.equal('final');
    const transitions = Object.values(json.states!.running!.on!).flat();
    expect(transitions.filter((t) => !t.description)).to.deep.equal([]);
  });

  it('compiles guarded per-step transitions selected by event type, with the join and when in meta', () => {
    const json = graphMachineDefinition(diamond()) as JsonNode;
    const on = json.states!.running!.on!;
    expect(Object.keys(on)).to.deep.equal([
      'step.a.settled',
      'step.a.retry',
      'step.b.settled',
      'step.b.retry',
      'step.c.settled',
      'step.c.retry',
      'step.d.settled',
      'step.d.retry',
      'engine.finished',
      'engine.abort',
    ]);
    const settled = on['step.b.settled']!;
    expect(settled.map((t) => t.guard?.type ?? null)).to.deep.equal([
      'attemptSucceeded',
      'retryAllowed',
      null,
    ]);
    // Step transitions keep the machine in `running`; progress is the context.
    expect(settled.map((t) => t.target)).to.deep.equal([undefined, undefined, undefined]);
    expect(settled.map((t) => t.actions)).to.deep.equal([
      [{ type: 'completeStep', params: { step: 1, name: 'b' } }, 'emitEvents'],
      [{ type: 'scheduleRetry', params: { step: 1, name: 'b' } }, 'emitEvents'],
      [{ type: 'failStep', params: { step: 1, name: 'b' } }, 'emitEvents'],
    ]);
    expect(on['step.d.settled']![0]!.meta).to.deep.equal({
      step: 'd',
      agent: 'tier0_echo',
      dependsOn: ['b', 'c'],
      dependents: [],
    });
    expect(on['step.c.settled']![0]!.meta!.when).to.equal('${inputs.go == true}');
    expect(on['step.d.settled']![0]!.description).to.contain(
      'Join: starts once b, c have all finished',
    );
    expect(on['step.c.settled']![0]!.description).to.contain(
      'Runs only when ${inputs.go == true} holds',
    );
    expect(on['engine.finished']![0]!.target).to.deep.equal(['#graph_wf.completed']);
    expect(on['engine.abort']![0]!.target).to.deep.equal(['#graph_wf.aborted']);
  });

  it('adds an iteration transition for loop steps only', () => {
    const wf = workflow([
      { name: 'a', agent: 'tier0_echo' },
      { name: 'b', agent: 'tier0_echo', depends_on: ['a'], loop_until: '${steps.b.outputs.done}' },
    ]);
    const on = (graphMachineDefinition(wf) as JsonNode).states!.running!.on!;
    expect(on).to.have.property('step.b.iteration');
    expect(on).not.to.have.property('step.a.iteration');
  });

  it('round-trips its definition through JSON', () => {
    const json = graphMachineDefinition(diamond());
    expect(JSON.parse(JSON.stringify(json))).to.deep.equal(json);
  });

  it('compiles a workflow once and reuses the machine', () => {
    const wf = diamond();
    expect(compileGraphMachine(wf)).to.equal(compileGraphMachine(wf));
  });
});

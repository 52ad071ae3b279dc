import { expect } from 'chai';
import { compileGraphMachine, graphMachineDefinition } from '../../src/engine/adapters/graph.js';
import { workflow } from './graph-helpers.js';

interface JsonNode {
  description?: string;
  type?: string;
  states?: Record<string, JsonNode>;
  meta?: Record<string, unknown>;
  on?: Record<string, { target?: string[]; guard?: { type: string }; actions: unknown[] }[]>;
  always?: { target?: string[]; guard?: { type: string } }[];
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
  it('gives every state node a description', () => {
    const nodes: [string, JsonNode][] = [];
    allNodes(graphMachineDefinition(diamond()), 'root', nodes);
    const missing = nodes.filter(([, node]) => !node.description).map(([path]) => path);
    expect(missing).to.deep.equal([]);
    expect(nodes.length).to.equal(1 + 3 + 1 + 4);
  });

  it('compiles one node per step under running, with dependencies and when in meta', () => {
    const json = graphMachineDefinition(diamond()) as JsonNode;
    const running = json.states!.running!;
    expect(Object.keys(running.states!)).to.deep.equal(['starting', 'a', 'b', 'c', 'd']);
    expect(running.states!.d!.meta).to.deep.equal({
      step: 'd',
      agent: 'tier0_echo',
      dependsOn: ['b', 'c'],
      dependents: [],
    });
    expect(running.states!.c!.meta!.when).to.equal('${inputs.go == true}');
    expect(running.states!.d!.description).to.contain('Join: starts once b, c have all finished');
    expect(running.states!.c!.description).to.contain('Runs only when ${inputs.go == true} holds');
    expect(Object.keys(json.states!)).to.deep.equal(['running', 'completed', 'aborted']);
    expect(json.states!.completed!.type).to.equal('final');
  });

  it('generates guarded per-step transitions selected by event type', () => {
    const json = graphMachineDefinition(diamond()) as JsonNode;
    const on = json.states!.running!.on!;
    expect(Object.keys(on)).to.include.members([
      'step.a.settled',
      'step.a.retry',
      'step.d.settled',
      'engine.abort',
    ]);
    const settled = on['step.b.settled']!;
    expect(settled.map((t) => t.guard?.type ?? null)).to.deep.equal([
      'attemptSucceeded',
      'retryAllowed',
      null,
    ]);
    expect(settled.map((t) => t.target)).to.deep.equal([
      ['#graph_wf.running.b'],
      ['#graph_wf.running.b'],
      ['#graph_wf.running.b'],
    ]);
    expect(settled[0]!.actions).to.deep.equal([
      { type: 'completeStep', params: { step: 1, name: 'b' } },
      'emitEvents',
    ]);
    const always = json.states!.running!.always!;
    expect(always.map((t) => [t.guard?.type, t.target])).to.deep.equal([
      ['allFinished', ['#graph_wf.completed']],
    ]);
  });

  it('round-trips its definition through JSON', () => {
    const json = graphMachineDefinition(diamond());
    expect(JSON.parse(JSON.stringify(json))).to.deep.equal(json);
  });

  it('renames a step node whose name is taken by the starting node', () => {
    const wf = workflow([
      { name: 'load', agent: 'tier0_echo' },
      { name: 'starting', agent: 'tier0_echo', depends_on: ['load'] },
    ]);
    const json = graphMachineDefinition(wf) as JsonNode;
    expect(Object.keys(json.states!.running!.states!)).to.deep.equal([
      'starting',
      'load',
      'step-1',
    ]);
    expect(json.states!.running!.states!['step-1']!.meta!.step).to.equal('starting');
    expect(Object.keys(json.states!.running!.on!)).to.include('step.step-1.settled');
  });

  it('compiles a workflow once and reuses the machine', () => {
    const wf = diamond();
    expect(compileGraphMachine(wf)).to.equal(compileGraphMachine(wf));
  });
});

import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WebSocket } from 'ws';
import { packageRoot } from '../../src/config/index.js';

// Resolved here: the child runs in a directory without node_modules.
const TSX = pathToFileURL(createRequire(join(packageRoot, 'package.json')).resolve('tsx')).href;

/** A message of the Stately inspector protocol (what `createWebSocketReceiver` reads). */
interface StatelyEvent {
  type: string;
  sessionId: string;
  name?: string;
  parentId?: string;
  definition?: string;
  snapshot?: {
    value?: unknown;
    status?: string;
    children?: Record<string, unknown>;
    context?: { items?: Record<string, unknown> };
  };
}

describe('agentic run --inspect', function () {
  this.timeout(30_000);
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-inspect-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** Runs `agentic run <workflow> --inspect` on the graph engine; the receiver's messages. */
  async function inspected(workflow: string): Promise<StatelyEvent[]> {
    const child = spawn(
      process.execPath,
      [
        '--import',
        TSX,
        join(packageRoot, 'src', 'cli.ts'),
        'run',
        workflow,
        '--inspect',
        '-r',
        join(root, 'runs'),
        '--adapter',
        'graph',
      ],
      { cwd: root, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stdout.resume();
    const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const found = /connect a WebSocket receiver to (ws:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
        if (found) resolve(found[1]!);
      });
      child.once('exit', (code) => reject(new Error(`exited with ${String(code)}: ${stderr}`)));
    });
    const messages: StatelyEvent[] = [];
    const socket = new WebSocket(url);
    socket.on('message', (data: Buffer) =>
      messages.push(JSON.parse(data.toString()) as StatelyEvent),
    );
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    expect(await exit, stderr).to.equal(0);
    await closed;
    return messages;
  }

  /** The engine actor whose definition is the graph machine `graph_<workflow>`. */
  function engineOf(messages: StatelyEvent[], workflow: string): StatelyEvent {
    const engine = messages.find(
      (m) =>
        m.type === '@xstate.actor' &&
        m.name === 'engine' &&
        m.definition !== undefined &&
        (JSON.parse(m.definition) as { id: string }).id === `graph_${workflow}`,
    );
    expect(engine, `engine of ${workflow}`).to.not.equal(undefined);
    return engine!;
  }

  it("shows a sub-workflow step's child run as the invoked child of its running state", async () => {
    const messages = await inspected('sub_workflow_demo');
    const engine = engineOf(messages, 'sub_workflow_demo');
    type Node = { states: Record<string, Node>; invoke?: { id: string; src: string }[] };
    const definition = JSON.parse(engine.definition!) as Node;
    const running = definition.states.running!.states.summarise!.states.running!;
    expect(running.invoke?.map((i) => [i.id, i.src])).to.deep.equal([
      ['child:summarise', 'workflowRun'],
    ]);
    // The child run's actor has the invoke's id and the parent's engine actor as its parent.
    const child = messages.find((m) => m.type === '@xstate.actor' && m.name === 'child:summarise');
    expect(child, 'child run actor').to.not.equal(undefined);
    expect(child!.parentId).to.equal(engine.sessionId);
    // Its own engine runs the child workflow's machine.
    const childEngine = engineOf(messages, 'test_deterministic');
    expect(childEngine.parentId).to.equal(child!.sessionId);
    // The parent's engine snapshots list it while the step runs, then no longer.
    const listed: string[][] = [];
    for (const m of messages) {
      if (m.type !== '@xstate.snapshot' || m.sessionId !== engine.sessionId) continue;
      const keys = Object.keys(m.snapshot?.children ?? {});
      if (JSON.stringify(listed.at(-1)) !== JSON.stringify(keys)) listed.push(keys);
    }
    expect(listed).to.deep.equal([[], ['child:summarise'], []]);
  });

  it("shows a map step's item counter in the engine's snapshots", async () => {
    const messages = await inspected('map_demo');
    const engine = engineOf(messages, 'map_demo');
    const counts: unknown[] = [];
    for (const m of messages) {
      if (m.type !== '@xstate.snapshot' || m.sessionId !== engine.sessionId) continue;
      const counter = m.snapshot?.context?.items?.trim_each;
      if (counter !== undefined && JSON.stringify(counts.at(-1)) !== JSON.stringify(counter))
        counts.push(counter);
    }
    expect(counts[0]).to.deep.equal({ total: 4, done: 0, failed: 0, running: 0 });
    expect(counts.at(-1)).to.deep.equal({ total: 4, done: 4, failed: 0, running: 0 });
  });

  it("prints the inspector's address, runs once a receiver connects, and the receiver sees each step move", async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        TSX,
        join(packageRoot, 'src', 'cli.ts'),
        'run',
        'test_deterministic',
        '--inspect',
        '-r',
        join(root, 'runs'),
        '--adapter',
        'graph',
      ],
      { cwd: root, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const found = /connect a WebSocket receiver to (ws:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
        if (found) resolve(found[1]!);
      });
      child.once('exit', (code) => reject(new Error(`exited with ${String(code)}: ${stderr}`)));
    });
    expect(stderr).to.match(/inspector: open http:\/\/127\.0\.0\.1:\d+\//);
    // Nothing runs before a receiver is there.
    expect(stderr).not.to.include('process');

    const messages: StatelyEvent[] = [];
    const socket = new WebSocket(url);
    socket.on('message', (data: Buffer) =>
      messages.push(JSON.parse(data.toString()) as StatelyEvent),
    );
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    expect(await exit).to.equal(0);
    await closed;
    expect(JSON.parse(stdout)).to.have.property('summary');

    // The engine actor is announced with the compiled graph machine as its definition.
    const engine = messages.find(
      (m) => m.type === '@xstate.actor' && m.name === 'engine' && m.definition !== undefined,
    );
    expect(engine, 'engine actor').to.not.equal(undefined);
    const definition = JSON.parse(engine!.definition!) as {
      id: string;
      states: { running: { states: Record<string, unknown> } };
    };
    expect(definition.id).to.equal('graph_test_deterministic');
    const steps = Object.keys(definition.states.running.states);
    expect(steps).to.include.members(['process', 'count', 'report']);

    // Its snapshots show each step's region go pending → running → success.
    const seen: Record<string, string[]> = {};
    for (const m of messages) {
      if (m.type !== '@xstate.snapshot' || m.sessionId !== engine!.sessionId) continue;
      const regions = (m.snapshot?.value as { running?: Record<string, string> } | undefined)
        ?.running;
      if (regions === undefined) continue;
      for (const [step, state] of Object.entries(regions)) {
        const states = (seen[step] ??= ['pending']);
        if (states.at(-1) !== state) states.push(state);
      }
    }
    for (const step of steps) {
      expect(seen[step], step).to.deep.equal(['pending', 'running', 'success']);
    }
  });
});

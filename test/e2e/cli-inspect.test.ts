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
  definition?: string;
  snapshot?: { value?: unknown; status?: string };
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

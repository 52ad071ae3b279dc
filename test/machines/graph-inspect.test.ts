import { createWebSocketInspector } from '@statelyai/inspect';
import { expect } from 'chai';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AnyMachineSnapshot, InspectionEvent } from 'xstate';
import { createRuntime } from '../../src/engine/runtime.js';
import type { Runtime } from '../../src/engine/types.js';
import { removeDir, tempDir } from '../conformance/helpers.js';

const DIAMOND = [
  'name: diamond',
  'steps:',
  '  - { name: a, agent: tier0_echo, inputs: { v: 1 } }',
  '  - { name: b, agent: tier0_echo, depends_on: [a] }',
  '  - { name: c, agent: tier0_echo, depends_on: [a] }',
  '  - { name: d, agent: tier0_echo, depends_on: [b, c] }',
  '',
].join('\n');

describe('graph machine in the inspector', () => {
  let dir: string;
  let runtime: Runtime | undefined;
  beforeEach(async () => {
    dir = await tempDir('agentic-inspect-');
  });
  afterEach(async () => {
    await runtime?.shutdown({ graceMs: 1000 });
    runtime = undefined;
    await removeDir(dir);
  });

  it("shows each step's region go pending → running → success in a live run (plain inspect callback)", async () => {
    const seen: Record<string, string[]> = {};
    const inspect = (event: InspectionEvent) => {
      if (event.type !== '@xstate.snapshot') return;
      const snapshot = event.snapshot as Partial<AnyMachineSnapshot>;
      const regions = (snapshot.value as { running?: Record<string, string> } | undefined)?.running;
      if (snapshot.machine === undefined || typeof regions !== 'object') return;
      // Read when notified: the runtime updates the regions in place.
      for (const [step, state] of Object.entries(regions)) {
        const states = (seen[step] ??= []);
        if (states.at(-1) !== state) states.push(state);
      }
    };
    runtime = createRuntime({
      runsDir: join(dir, 'runs'),
      workflowsDir: join(dir, 'wf'),
      persist: false,
      defaultAdapter: 'graph',
      inspect,
    });
    const record = await runtime.run({ workflow: DIAMOND });
    expect(record.status).to.equal('success');
    const path = ['pending', 'running', 'success'];
    expect(seen).to.deep.equal({ a: path, b: path, c: path, d: path });
  });

  it('reaches a WebSocket receiver through createWebSocketInspector: real definitions, regions moving, value fixed per snapshot', async () => {
    // The receiving end: a real WebSocket server on a free loopback port.
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const messages: {
      type: string;
      name?: string;
      sessionId: string;
      definition?: string;
      snapshot?: { value?: unknown };
    }[] = [];
    const connection = once(server, 'connection') as Promise<[WebSocket]>;
    const inspector = createWebSocketInspector({ url: `ws://127.0.0.1:${port}` });
    const [socket] = await connection;
    socket.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString()) as never));
    try {
      runtime = createRuntime({
        runsDir: join(dir, 'runs'),
        workflowsDir: join(dir, 'wf'),
        persist: false,
        inspect: inspector.inspect,
      });
      const graph = await runtime.run({ workflow: DIAMOND, adapter: 'graph' });
      const native = await runtime.run({ workflow: DIAMOND, adapter: 'native' });
      expect([graph.status, native.status]).to.deep.equal(['success', 'success']);
      // The inspector holds what it is given until its socket opens, which the server's
      // 'connection' can precede, and stop() drops what it still holds: wait for both engines'
      // definitions to arrive (bounded) before stopping it.
      const deadline = Date.now() + 5000;
      while (
        messages.filter((m) => m.type === '@xstate.actor' && m.name === 'engine').length < 2 &&
        Date.now() < deadline
      ) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const closed = once(socket, 'close');
      inspector.stop();
      await closed;
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const engines = messages.filter((m) => m.type === '@xstate.actor' && m.name === 'engine');
    expect(engines).to.have.length(2);
    const [graphDef, nativeDef] = engines.map(
      (m) => JSON.parse(m.definition!) as { id: string; states?: { running: { states: object } } },
    );
    expect(graphDef!.id).to.equal('graph_diamond');
    expect(Object.keys(graphDef!.states!.running.states)).to.deep.equal(['a', 'b', 'c', 'd']);
    expect(nativeDef!.id).to.equal('native-scheduler');
    const seen: Record<string, string[]> = {};
    for (const m of messages) {
      if (m.type !== '@xstate.snapshot' || m.sessionId !== engines[0]!.sessionId) continue;
      const regions = (m.snapshot?.value as { running?: Record<string, string> } | undefined)
        ?.running;
      for (const [step, state] of Object.entries(regions ?? {})) {
        const states = (seen[step] ??= []);
        if (states.at(-1) !== state) states.push(state);
      }
    }
    const path = ['pending', 'running', 'success'];
    expect(seen).to.deep.equal({ a: path, b: path, c: path, d: path });
  });
});

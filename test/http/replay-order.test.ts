/**
 * Issue 24.8: a client that re-reads a run after a restart (its replay buffer gone with the old
 * process) gets the sequence it saw live, in the live order, also where parallel steps ended
 * in another order than the YAML lists them.
 */
import { expect } from 'chai';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowEvent } from '../../src/generated/events.js';
import { connectWs, type WsClient } from './events-fixtures.js';
import { call, startTestService, type TestService } from './harness.js';

/**
 * `slow` is listed first and starts first, but `fast` and `broken` (parallel with it) end
 * before it; `after_broken` is skipped when `broken` fails, before `slow` ends.
 */
const WORKFLOW = `
name: parallel_order
steps:
  - { name: slow, agent: tier0_sleep, inputs: { ms: 300 } }
  - { name: fast, agent: tier0_echo, inputs: { text: hi } }
  - { name: broken, agent: tier0_fail, inputs: { message: boom } }
  - { name: after_broken, agent: tier0_echo, depends_on: [broken] }
  - { name: last, agent: tier0_echo, depends_on: [slow, fast] }
`;

const untilEnd = (client: WsClient): Promise<WorkflowEvent[]> =>
  client.events.until((e) => e.at(-1)?.type === 'workflow_end', 'workflow_end');

/** What a client sees of each event: its type, its step and status, in order. */
const shape = (events: readonly WorkflowEvent[]): string[] =>
  events.map((event) => {
    const step = 'step' in event ? `:${event.step}` : '';
    const status = 'status' in event ? `=${event.status}` : '';
    return `${event.type}${step}${status}`;
  });

const withoutTimestamp = (event: WorkflowEvent): Record<string, unknown> => {
  const { timestamp: _timestamp, ...rest } = event;
  return rest;
};

describe('replay after a restart (issue 24.8)', () => {
  let root: string;
  let svc: TestService | undefined;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-replay-order-'));
    await mkdir(join(root, 'workflows'));
    await writeFile(join(root, 'workflows', 'parallel_order.yaml'), WORKFLOW);
  });

  afterEach(async () => {
    await svc?.dispose();
    svc = undefined;
    await rm(root, { recursive: true, force: true });
  });

  it('gives a new service the live order of parallel steps that ended out of YAML order', async () => {
    svc = await startTestService({ root });
    const wsUrl = svc.url.replace(/^http/, 'ws');
    const liveClient = connectWs(`${wsUrl}/ws/execution/par-1`);
    await liveClient.opened;
    const started = await call(svc.url, 'POST', '/api/run', {
      workflow: 'parallel_order',
      run_id: 'par-1',
    });
    expect(started.status).to.equal(200);
    const live = await untilEnd(liveClient);
    liveClient.ws.close(1000);
    await liveClient.closed;

    // The run really ended out of file order: `slow` (first in the YAML) ends after the others.
    const ends = shape(live).filter((s) => s.startsWith('step_end'));
    expect(ends.at(-2)).to.equal('step_end:slow=success');
    expect(ends.at(-1)).to.equal('step_end:last=success');

    // A new service on the same directories: the buffer is gone, the run file is all there is.
    await svc.close();
    svc = await startTestService({ root });
    const lateClient = connectWs(`${svc.url.replace(/^http/, 'ws')}/ws/execution/par-1`);
    const replayed = await untilEnd(lateClient);
    lateClient.ws.close(1000);
    await lateClient.closed;

    expect(shape(replayed)).to.deep.equal(shape(live));
    expect(replayed.map(withoutTimestamp)).to.deep.equal(live.map(withoutTimestamp));
  });
});

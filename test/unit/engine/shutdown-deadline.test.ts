import { expect } from 'chai';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentRequest, AgentResult } from '../../../src/agents/types.js';
import { createRuntime } from '../../../src/engine/runtime.js';
import type { Runtime, WorkflowEvent } from '../../../src/engine/types.js';
import { createLogger } from '../../../src/log.js';
import { logLines } from '../../support/log-lines.js';

const RUNS = 200;
/** What stopping each run's step costs (a busy wait in its abort listener). */
const STOP_COST_MS = 20;
const workflow = { name: 'held', steps: [{ name: 'a', agent: 'held' }] };

/**
 * Runs whose step waits for `release` and takes STOP_COST_MS of CPU to stop: ending all RUNS
 * takes 4 s, past the 1 s the shutdown gives its cancellations after a grace of 0.
 */
function heldRuns() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let aborted = 0;
  const held = ({ signal }: AgentRequest): Promise<AgentResult> =>
    new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => {
        aborted++;
        const until = performance.now() + STOP_COST_MS;
        while (performance.now() < until);
        reject(new Error('aborted'));
      });
      void released.then(() =>
        resolve({ output: { ok: true }, modelUsed: null, tokensUsed: null }),
      );
    });
  return { held, release: () => release(), aborted: () => aborted };
}

async function statuses(dir: string): Promise<string[]> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.json'));
  return Promise.all(
    names.map(
      async (name) =>
        (JSON.parse(await readFile(join(dir, name), 'utf8')) as { status: string }).status,
    ),
  );
}

const turns = async (count: number): Promise<void> => {
  for (let i = 0; i < count; i++) await new Promise<void>((resolve) => setTimeout(resolve, 1));
};

describe('runtime shutdown: runs it cannot end before its deadline', function () {
  this.timeout(60_000);
  let dir: string;
  const runtimes: Runtime[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-shutdown-deadline-'));
  });
  afterEach(async () => {
    for (const rt of runtimes.splice(0)) await rt.shutdown({ graceMs: 0 });
    await rm(dir, { recursive: true, force: true });
  });

  async function started(agent: ReturnType<typeof heldRuns>['held']) {
    const { stream, lines } = logLines();
    const rt = createRuntime({
      runsDir: dir,
      agents: { held: agent },
      defaultAdapter: 'native',
      maxActiveRuns: RUNS,
      // The cancellation at the deadline (resume on leaves the runs to the next start instead).
      resume: 'off',
      logger: createLogger({ format: 'json', level: 'warn', destination: stream }),
    });
    runtimes.push(rt);
    const events: WorkflowEvent[] = [];
    rt.subscribe((event) => events.push(event));
    for (let i = 0; i < RUNS; i++) await rt.start({ workflow, runId: `held-${i}` });
    while (events.filter((e) => e.type === 'step_start').length < RUNS) await turns(1);
    return { rt, events, lines };
  }

  function saidUnwritten(lines: Record<string, unknown>[]): Record<string, unknown> {
    const said = lines.filter((line) => typeof line.unwritten === 'number');
    expect(said).to.have.length(1);
    expect(said[0]!.msg).to.equal(
      'shutdown grace passed: runs left unwritten; their files keep the start record and the next start marks them interrupted',
    );
    return said[0]!;
  }

  it('exiting: stops cancelling at the deadline, leaves the rest inert with their start records (the e2e test restarts on them)', async () => {
    const runs = heldRuns();
    const { rt, events, lines } = await started(runs.held);
    await rt.shutdown({ graceMs: 0, exiting: true });

    const said = saidUnwritten(lines);
    const left = said.notCancelled as number;
    // Before, every run was cancelled, whatever it took (here 4 s of stopping).
    expect(left).to.be.above(0).and.below(RUNS);
    expect(runs.aborted()).to.equal(RUNS - left);
    const ends = events.filter((e) => e.type === 'workflow_end');
    expect(ends).to.have.length(RUNS - left);
    expect(rt.activeRuns()).to.deep.equal([]);
    const before = await statuses(dir);
    expect(before.filter((status) => status === 'running')).to.have.length(
      said.unwritten as number,
    );

    // The runs left behind may still move (the process exits right after): nothing of them
    // reaches events or files.
    const seen = events.length;
    runs.release();
    await turns(20);
    expect(events).to.have.length(seen);
    expect(await statuses(dir)).to.have.members(before);
  });

  it('not exiting: the runs left at the deadline are still stopped, without events or end records', async () => {
    const runs = heldRuns();
    const { rt, events, lines } = await started(runs.held);
    await rt.shutdown({ graceMs: 0 });

    const said = saidUnwritten(lines);
    const left = said.notCancelled as number;
    expect(left).to.be.above(0).and.below(RUNS);
    // Every step was aborted: no call or timer of the runtime's runs is left.
    expect(runs.aborted()).to.equal(RUNS);
    expect(events.filter((e) => e.type === 'workflow_end')).to.have.length(RUNS - left);
    const seen = events.length;
    runs.release();
    await turns(20);
    expect(events).to.have.length(seen);
    const running = (await statuses(dir)).filter((status) => status === 'running');
    expect(running).to.have.length(said.unwritten as number);
  });
});

/**
 * Per-item map resume on the real process (docs/durable-runs.md, "Map steps, item by item"): a
 * run killed (SIGKILL) in the middle of a map step is resumed by the next start; every item whose
 * line was in the journal when the process died has run exactly once (its side effect: a line its
 * agent appends when it finishes), no item runs more than twice, and the outputs are in list order.
 */
import { expect } from 'chai';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import { spawnService, until, type ServiceProcess } from './service-process.js';

const ITEMS = 24;

const MAPPED = `name: mapped
inputs: { list: { type: array } }
steps:
  - name: each
    for_each: '\${inputs.list}'
    max_concurrency: 2
    agent: effect
    inputs: { n: '\${item.value}', ms: 150 }
`;

/** The custom agents module: the side effect happens when the item's work is done. */
function agentsModule(log: string): string {
  return `import { appendFileSync } from 'node:fs';
export default {
  effect: ({ runId, input, signal }) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        appendFileSync(${JSON.stringify(log)}, runId + ' ' + input.n + '\\n');
        resolve({ output: { n: input.n }, modelUsed: null, tokensUsed: null });
      }, Number(input.ms));
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(new Error('stopped'));
      });
    }),
};
`;
}

describe('service process: a map step resumed item by item after kill -9', function () {
  this.timeout(180_000);
  let root: string;
  let runs: string;
  let log: string;
  let env: Record<string, string>;
  const services: ServiceProcess[] = [];

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-e2e-mapres-'));
    runs = join(root, 'runs');
    log = join(root, 'effects.log');
    await cp(join(packageRoot, 'workflows'), join(root, 'workflows'), { recursive: true });
    await writeFile(join(root, 'workflows', 'mapped.yaml'), MAPPED);
    await writeFile(join(root, 'agents.mjs'), agentsModule(log));
    await writeFile(log, '');
    env = {
      AGENTIC_PORT: '0',
      AGENTIC_RUNS_DIR: runs,
      AGENTIC_WORKFLOWS_DIR: join(root, 'workflows'),
      AGENTIC_AGENTS_MODULE: join(root, 'agents.mjs'),
      AGENTIC_NO_LLM: '1',
      LOG_FORMAT: 'json',
    };
  });
  afterEach(async () => {
    for (const { child, exit } of services.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exit;
    }
    await rm(root, { recursive: true, force: true });
  });

  function service(): ServiceProcess {
    const started = spawnService(env);
    services.push(started);
    return started;
  }

  async function record(runId: string): Promise<RunRecord | undefined> {
    for (const name of await readdir(runs)) {
      if (name.startsWith('.') || !name.endsWith(`_${runId}.json`)) continue;
      return JSON.parse(await readFile(join(runs, name), 'utf8')) as RunRecord;
    }
    return undefined;
  }

  /** The item indexes the run's journal on disk says finished. */
  async function journaledItems(): Promise<Set<number>> {
    const done = new Set<number>();
    for (const name of await readdir(runs)) {
      if (!name.endsWith('.journal')) continue;
      for (const line of (await readFile(join(runs, name), 'utf8')).split('\n')) {
        if (!line.endsWith('}')) continue;
        const parsed = JSON.parse(line) as { item?: { index: number } };
        if (parsed.item !== undefined) done.add(parsed.item.index);
      }
    }
    return done;
  }

  async function effects(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const line of (await readFile(log, 'utf8')).split('\n')) {
      if (line !== '') counts.set(line, (counts.get(line) ?? 0) + 1);
    }
    return counts;
  }

  it('kill -9 mid-map: the next start runs only the items not journaled; outputs in order', async () => {
    const first = service();
    const url = await first.listening;
    const list = Array.from({ length: ITEMS }, (_, i) => i);
    const response = await fetch(`${url}/api/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'mapped', run_id: 'mk', input_data: { list } }),
    });
    expect(response.status, await response.text()).to.equal(200);
    await until('six journaled items', async () => (await journaledItems()).size >= 6);
    first.child.kill('SIGKILL');
    await first.exit;
    const before = await journaledItems();
    expect((await record('mk'))?.status).to.equal('running');
    expect(before.size).to.be.below(ITEMS);

    service();
    await until(
      'the run resumed and ended',
      async () => {
        const status = (await record('mk'))?.status;
        return status === 'success' || status === 'failed';
      },
      120_000,
    );
    const done = (await record('mk'))!;
    expect(done.status, JSON.stringify(done.steps)).to.equal('success');
    expect(done.steps[0]!.output).to.deep.equal({ results: list.map((n) => ({ n })), failed: 0 });
    const counts = await effects();
    let twice = 0;
    for (const n of list) {
      const count = counts.get(`mk ${n}`) ?? 0;
      if (before.has(n)) expect(count, `item ${n} (journaled before the kill)`).to.equal(1);
      expect(count, `item ${n}`).to.be.within(1, 2);
      if (count === 2) twice++;
    }
    // At most the 2 items running at the kill and those finished in its last commit window (50 ms,
    // up to ~250 ms on a loaded machine: 2 at a time of 150 ms items).
    expect(twice).to.be.at.most(6);
  });
});

/**
 * Per-item resume of a map step (docs/durable-runs.md) on both engines, through the real runtime
 * and real files: a run left mid-map by a runtime that stopped is resumed by the next one; the
 * items that had finished are not run again (executions counted), the interrupted ones run again,
 * the outputs are those of an uninterrupted run, in item order. For a sub-workflow body the
 * children's run files are the record too: a finished child is reused, an interrupted one resumed
 * under its own run id.
 */
import { expect } from 'chai';
import { mkdir, readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Agent } from '../../src/agents/types.js';
import { createRuntime } from '../../src/engine/runtime.js';
import type {
  AdapterName,
  Runtime,
  RuntimeOptions,
  WorkflowEvent,
} from '../../src/engine/types.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import {
  removeDir,
  runFiles,
  sequence,
  tempDir,
  validateEvent,
  validateRecord,
} from './helpers.js';

const ADAPTERS: readonly AdapterName[] = ['native', 'graph'];

const MAP = `name: mapped
inputs: { list: { type: array, default: [a, b, c, d, e, f] } }
outputs: { all: { from: '\${steps.each.outputs.results}' } }
steps:
  - name: each
    for_each: '\${inputs.list}'
    max_concurrency: 2
    on_item_failure: collect
    agent: upper
    inputs: { text: '\${item.value}', n: '\${item.index}' }
  - { name: after, agent: upper, depends_on: [each], inputs: { text: done } }
`;

const CHILD = `name: child
inputs: { text: { type: string, required: true } }
outputs: { shout: { from: '\${steps.up.outputs.text}' } }
steps:
  - { name: up, agent: upper, inputs: { text: '\${inputs.text}' } }
`;

const MAP_CHILD = `name: mapped_child
inputs: { list: { type: array, default: [a, b, c, d] } }
steps:
  - name: each
    for_each: '\${inputs.list}'
    max_concurrency: 2
    workflow: child
    inputs: { text: '\${item.value}' }
`;

/** Items frames as `item:<step>#<index>=<status>`, other events as `sequence` has them. */
function withItems(events: readonly WorkflowEvent[]): string[] {
  return events.map((event) =>
    event.type === 'step_complete' && event.item !== undefined
      ? `item:${event.step}#${event.item.index}=${event.item.status}`
      : sequence([event], true)[0]!,
  );
}

async function fileOf(
  runsDir: string,
  runId: string,
): Promise<{ name: string; record: RunRecord }> {
  const found = (await runFiles(runsDir)).find((file) => file.record.run_id === runId);
  if (found === undefined) throw new Error(`no run file of ${runId}`);
  return found;
}

for (const adapter of ADAPTERS) {
  describe(`map steps resumed item by item: ${adapter} engine`, function () {
    this.timeout(30_000);
    let dir: string;
    let runsDir: string;
    let workflowsDir: string;
    const runtimes: Runtime[] = [];
    /** Texts `upper` was called with, and the texts it holds (blocks on until aborted). */
    const probe = { calls: [] as string[], hold: new Set<string>(), held: 0 };
    let heldEnough: (() => void) | undefined;
    let heldTarget = 0;

    const agents: Record<string, Agent> = {
      upper: ({ input, signal }) => {
        const text = String(input.text);
        probe.calls.push(text);
        if (probe.hold.has(text)) {
          return new Promise((_, reject) => {
            signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
            if (++probe.held === heldTarget) heldEnough?.();
          });
        }
        return Promise.resolve({
          output: { text: text.toUpperCase() },
          modelUsed: null,
          tokensUsed: null,
        });
      },
    };

    beforeEach(async () => {
      dir = await tempDir('agentic-mapres-');
      runsDir = join(dir, 'runs');
      workflowsDir = join(dir, 'workflows');
      await mkdir(workflowsDir);
      await writeFile(join(workflowsDir, 'mapped.yaml'), MAP);
      await writeFile(join(workflowsDir, 'child.yaml'), CHILD);
      await writeFile(join(workflowsDir, 'mapped_child.yaml'), MAP_CHILD);
      Object.assign(probe, { calls: [], hold: new Set<string>(), held: 0 });
    });
    afterEach(async () => {
      for (const rt of runtimes.splice(0)) await rt.shutdown({ graceMs: 0 });
      await removeDir(dir);
    });

    function make(options: RuntimeOptions = {}): Runtime {
      const rt = createRuntime({
        runsDir,
        workflowsDir,
        defaultAdapter: adapter,
        agents,
        retryBaseMs: 1,
        ...options,
      });
      runtimes.push(rt);
      return rt;
    }

    /**
     * Runtime A starts `workflow` as `runId`, holding the items whose text is in `hold` until
     * `holding` of them wait, then stops (a deploy whose grace passed). Returns A's calls.
     */
    async function stopMidMap(workflow: string, runId: string, hold: string[], holding: number) {
      probe.hold = new Set(hold);
      heldTarget = holding;
      const waiting = new Promise<void>((resolve) => (heldEnough = resolve));
      const first = make();
      await first.start({ workflow, runId });
      await waiting;
      await first.shutdown({ graceMs: 0 });
      runtimes.splice(runtimes.indexOf(first), 1);
      const { name, record } = await fileOf(runsDir, runId);
      expect(record.status).to.equal('running');
      for (const entry of await readdir(runsDir)) {
        if (entry.endsWith('.owner')) await unlink(join(runsDir, entry));
      }
      const calls = [...probe.calls];
      probe.calls.length = 0;
      probe.hold.clear();
      return { calls, name };
    }

    /** Starts runtime B and collects the events of `runId` until its workflow_end. */
    async function resumed(runId: string) {
      const rt = make();
      const events: WorkflowEvent[] = [];
      const ended = new Promise<void>((resolve) =>
        rt.subscribe((event) => {
          if (event.run_id !== runId) return;
          events.push(event);
          if (event.type === 'workflow_end') resolve();
        }),
      );
      await ended;
      expect((await rt.recovery).resumed).to.have.length(1);
      for (const event of events)
        expect(validateEvent(event), JSON.stringify(event)).to.equal(true);
      // The run file is written from the process log a moment after its record is durable.
      await rt.shutdown({ graceMs: 1000 });
      runtimes.splice(runtimes.indexOf(rt), 1);
      const { record } = await fileOf(runsDir, runId);
      expect(validateRecord(record), JSON.stringify(validateRecord.errors)).to.equal(true);
      return { events, record };
    }

    it('does not run again the items that had finished; the outputs are in item order', async () => {
      const { calls, name } = await stopMidMap('mapped', 'mr', ['c', 'd'], 2);
      // a and b finished, c and d were running, e and f had not started.
      expect(calls).to.deep.equal(['a', 'b', 'c', 'd']);
      const journal = await readFile(join(runsDir, `.${name}.journal`), 'utf8');
      expect(journal).to.include('"item"');

      const { events, record } = await resumed('mr');
      expect(probe.calls).to.deep.equal(['c', 'd', 'e', 'f', 'done']);
      expect(withItems(events)).to.deep.equal([
        'workflow_start',
        'step_start:each',
        'item:each#2=success',
        'item:each#3=success',
        'item:each#4=success',
        'item:each#5=success',
        'step_end:each=success',
        'step_start:after',
        'step_end:after=success',
        'workflow_end=success',
      ]);
      expect(events[1]).to.include({ type: 'step_start', step: 'each', attempt: 2 });
      const frames = events.filter((e) => e.type === 'step_complete');
      expect(frames[0]).to.deep.include({ items: { total: 6, done: 3, failed: 0, running: 1 } });
      const results = ['a', 'b', 'c', 'd', 'e', 'f'].map((t) => ({ text: t.toUpperCase() }));
      expect(record.status).to.equal('success');
      expect(record.final_output).to.deep.equal({ all: results });
      expect(record.steps[0]!.output).to.deep.equal({ results, failed: 0 });
      expect(record.steps[0]!.metadata).to.deep.include({
        items: { total: 6, succeeded: 6, failed: 0 },
      });
      // A finished step's record keeps no list of finished items.
      expect(record.steps[0]!.metadata).not.to.have.property('finished_items');
    });

    it('resumed twice: the items finished before either stop are kept', async () => {
      await stopMidMap('mapped', 'm2', ['c', 'd'], 2);
      // B resumes; holds e and f, then stops too.
      probe.hold = new Set(['e', 'f']);
      heldTarget = 2;
      probe.held = 0;
      const waiting = new Promise<void>((resolve) => (heldEnough = resolve));
      const second = make();
      await waiting;
      await second.shutdown({ graceMs: 0 });
      runtimes.splice(runtimes.indexOf(second), 1);
      for (const entry of await readdir(runsDir)) {
        if (entry.endsWith('.owner')) await unlink(join(runsDir, entry));
      }
      expect(probe.calls).to.deep.equal(['c', 'd', 'e', 'f']);
      probe.calls.length = 0;
      probe.hold.clear();

      const { record } = await resumed('m2');
      expect(probe.calls).to.deep.equal(['e', 'f', 'done']);
      expect(record.final_output).to.deep.equal({
        all: ['a', 'b', 'c', 'd', 'e', 'f'].map((t) => ({ text: t.toUpperCase() })),
      });
    });

    it('a sub-workflow body: finished children reused, interrupted ones resumed under their ids', async () => {
      const { calls } = await stopMidMap('mapped_child', 'mw', ['c', 'd'], 2);
      expect(calls).to.deep.equal(['a', 'b', 'c', 'd']);
      expect((await fileOf(runsDir, 'mw-each-i2-1')).record.status).to.equal('running');

      const { record } = await resumed('mw');
      // Only the interrupted children's interrupted step ran again (in either order).
      expect([...probe.calls].sort()).to.deep.equal(['c', 'd']);
      expect(record.status, record.error ?? '').to.equal('success');
      expect(record.steps[0]!.output).to.deep.equal({
        results: ['A', 'B', 'C', 'D'].map((shout) => ({ shout })),
        failed: 0,
      });
      const ids = (await runFiles(runsDir)).map((f) => f.record.run_id).sort();
      expect(ids).to.deep.equal([
        'mw',
        'mw-each-i0-1',
        'mw-each-i1-1',
        'mw-each-i2-1',
        'mw-each-i3-1',
      ]);
      const resumedChild = (await fileOf(runsDir, 'mw-each-i2-1')).record;
      expect(resumedChild.status).to.equal('success');
      expect(resumedChild.extra.resumes).to.have.length(1);
    });

    it('a sub-workflow body whose finished items missed the journal: their child files are the record', async () => {
      const { name } = await stopMidMap('mapped_child', 'mj', ['c', 'd'], 2);
      // As if the process had died before its journal's last commit: no item lines.
      const path = join(runsDir, `.${name}.journal`);
      const kept = (await readFile(path, 'utf8'))
        .split('\n')
        .filter((line) => !line.includes('"item"'))
        .join('\n');
      await writeFile(path, kept);

      const { record } = await resumed('mj');
      expect([...probe.calls].sort()).to.deep.equal(['c', 'd']);
      expect(record.steps[0]!.output).to.deep.equal({
        results: ['A', 'B', 'C', 'D'].map((shout) => ({ shout })),
        failed: 0,
      });
    });
  });
}

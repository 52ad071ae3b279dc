/**
 * The map kind (`for_each:`) on both engines: exact event sequences (item frames included), the
 * collected outputs in item order, fail_fast vs collect, an empty list, a non-list, the
 * concurrency bound, cancel, the bounded item frames of a long list, the run file and the replay
 * rebuilt from it.
 */
import { expect } from 'chai';
import type { Agent } from '../../src/agents/types.js';
import { createRuntime } from '../../src/engine/runtime.js';
import type { AdapterName, Runtime, WorkflowEvent } from '../../src/engine/types.js';
import { replayFromRecord } from '../../src/events/replay-from-record.js';
import {
  removeDir,
  runFiles,
  sequence,
  tempDir,
  validateEvent,
  validateRecord,
} from './helpers.js';

/** Items frames as `step_complete:<step>#<index>=<status>`, other events as `sequence` has them. */
function withItems(events: readonly WorkflowEvent[]): string[] {
  return events.map((event) =>
    event.type === 'step_complete' && event.item !== undefined
      ? `item:${event.step}#${event.item.index}=${event.item.status}`
      : sequence([event])[0]!,
  );
}

const LIST = `
name: map_three
inputs: { files: { type: array, default: [a.txt, b.txt, c.txt] } }
outputs: { summaries: { from: '\${steps.each.outputs.results}' } }
steps:
  - { name: list, agent: tier0_echo, inputs: { files: '\${inputs.files}' } }
  - name: each
    for_each: '\${steps.list.outputs.files}'
    as: file
    max_concurrency: 1
    agent: tier0_echo
    inputs: { path: '\${item.file}', n: '\${item.index}' }
    depends_on: [list]
  - { name: after, agent: tier0_echo, depends_on: [each], inputs: { n: '\${steps.each.outputs.failed}' } }
`;

function failing(policy: string, concurrency = 1): string {
  return `
name: map_${policy}
steps:
  - name: each
    for_each: [1, 2, 3]
    max_concurrency: ${concurrency}
    on_item_failure: ${policy}
    agent: tier1_maybe
    inputs: { v: '\${item.value}' }
  - { name: after, agent: tier0_echo, depends_on: [each] }
`;
}

for (const adapter of ['native', 'graph'] as const satisfies readonly AdapterName[]) {
  describe(`map steps (${adapter})`, () => {
    let runsDir: string;
    let runtime: Runtime | undefined;
    const probe = { running: 0, max: 0, calls: 0 };
    const release: (() => void)[] = [];

    const agents: Record<string, Agent> = {
      // Fails item value 2; the others echo their input.
      tier1_maybe: ({ input }) => {
        probe.calls++;
        return input.v === 2
          ? Promise.reject(new Error(`bad item ${String(input.v)}`))
          : Promise.resolve({ output: { v: input.v }, modelUsed: 'm', tokensUsed: null });
      },
      // Holds for one macrotask, counting how many run at once.
      tier1_probe: async ({ input }) => {
        probe.running++;
        probe.max = Math.max(probe.max, probe.running);
        await new Promise((resolve) => setImmediate(resolve));
        probe.running--;
        return { output: { ...input }, modelUsed: null, tokensUsed: null };
      },
      // Waits until released or aborted.
      tier1_wait: ({ signal }) =>
        new Promise((resolve, reject) => {
          probe.running++;
          signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
          release.push(() => resolve({ output: {}, modelUsed: null, tokensUsed: null }));
        }),
    };

    async function run(yaml: string, input: Record<string, unknown> = {}) {
      runtime ??= createRuntime({
        runsDir,
        noLlm: true,
        defaultAdapter: adapter,
        retryBaseMs: 1,
        agents,
      });
      const handle = await runtime.start({ workflow: yaml, input });
      const events: WorkflowEvent[] = [];
      for await (const event of handle.events) events.push(event);
      const record = await handle.done;
      for (const event of events)
        expect(validateEvent(event), JSON.stringify(event)).to.equal(true);
      expect(validateRecord(record), JSON.stringify(validateRecord.errors)).to.equal(true);
      return { events, record };
    }

    beforeEach(async () => {
      runsDir = await tempDir('agentic-map-');
      Object.assign(probe, { running: 0, max: 0, calls: 0 });
      release.length = 0;
    });

    afterEach(async () => {
      await runtime?.shutdown({ graceMs: 1000 });
      runtime = undefined;
      await removeDir(runsDir);
    });

    it('maps a 3-item list: one frame per item, outputs in item order, one run file', async () => {
      const { events, record } = await run(LIST);
      expect(withItems(events)).to.deep.equal([
        'workflow_start',
        'step_start:list',
        'step_end:list',
        'step_start:each',
        'item:each#0=success',
        'item:each#1=success',
        'item:each#2=success',
        'step_end:each',
        'step_start:after',
        'step_end:after',
        'workflow_end',
      ]);
      const frames = events.filter((e) => e.type === 'step_complete');
      expect(frames.map((e) => e.type === 'step_complete' && e.items)).to.deep.equal([
        { total: 3, done: 1, failed: 0, running: 0 },
        { total: 3, done: 2, failed: 0, running: 0 },
        { total: 3, done: 3, failed: 0, running: 0 },
      ]);
      expect(frames[0]).to.include({ status: 'running', agent: 'tier0_echo', tier: '0' });
      const each = record.steps[1]!;
      expect(each.input).to.deep.equal({ items: 3 });
      expect(each.output).to.deep.equal({
        results: [
          { path: 'a.txt', n: 0 },
          { path: 'b.txt', n: 1 },
          { path: 'c.txt', n: 2 },
        ],
        failed: 0,
      });
      expect(each.metadata).to.deep.equal({
        attempts: 1,
        iterations: 1,
        items: { total: 3, succeeded: 3, failed: 0 },
      });
      expect(record.final_output).to.deep.equal({
        summaries: (each.output as { results: unknown }).results,
      });
      const files = await runFiles(runsDir);
      expect(files.map((f) => f.record)).to.deep.equal([record]);
    });

    it('replays the map from its run file: the step events, without the item frames', async () => {
      const { events, record } = await run(LIST);
      const live = sequence(events.filter((e) => e.type !== 'step_complete'));
      expect(sequence(replayFromRecord(record))).to.deep.equal(live);
    });

    it('fail_fast: the first failed item fails the step, later items never start', async () => {
      const { events, record } = await run(failing('fail_fast'));
      expect(withItems(events)).to.deep.equal([
        'workflow_start',
        'step_start:each',
        'item:each#0=success',
        'item:each#1=failed',
        'step_error:each',
        'step_end:each',
        'step_end:after',
        'workflow_end',
      ]);
      expect(probe.calls).to.equal(2);
      const each = record.steps[0]!;
      expect(each).to.include({
        status: 'failed',
        error: 'item 1 failed: bad item 2',
        output: null,
      });
      expect(each.metadata.items).to.deep.equal({
        total: 3,
        succeeded: 1,
        failed: 1,
        failures: [{ index: 1, error: 'bad item 2' }],
      });
      expect(record.steps[1]).to.include({ status: 'skipped' });
      expect(record.status).to.equal('failed');
    });

    it('collect: every item runs, a failed one is {error} in results, the step succeeds', async () => {
      const { events, record } = await run(failing('collect'));
      expect(withItems(events)).to.deep.equal([
        'workflow_start',
        'step_start:each',
        'item:each#0=success',
        'item:each#1=failed',
        'item:each#2=success',
        'step_end:each',
        'step_start:after',
        'step_end:after',
        'workflow_end',
      ]);
      const failedFrame = events.find((e) => e.type === 'step_complete' && e.item?.index === 1);
      expect(failedFrame).to.deep.include({
        item: { index: 1, status: 'failed', attempts: 1, error: 'bad item 2' },
      });
      const each = record.steps[0]!;
      expect(each.status).to.equal('success');
      expect(each.output).to.deep.equal({
        results: [{ v: 1 }, { error: 'bad item 2' }, { v: 3 }],
        failed: 1,
      });
      expect(record.status).to.equal('success');
    });

    it('retries an item up to the body max_attempts, alone', async () => {
      const { record } = await run(`
name: map_retry
steps:
  - name: each
    for_each: [1, 2]
    on_item_failure: collect
    max_attempts: 3
    agent: tier1_maybe
    inputs: { v: '\${item.value}' }
`);
      // Item 1 once, item 2 three times.
      expect(probe.calls).to.equal(4);
      expect(record.steps[0]!.metadata).to.deep.include({ attempts: 1 });
      expect(record.steps[0]!.output).to.deep.equal({
        results: [{ v: 1 }, { error: 'bad item 2' }],
        failed: 1,
      });
    });

    it('maps an empty list: no item frames, empty results, success', async () => {
      const { events, record } = await run(`
name: map_empty
steps:
  - { name: each, for_each: [], agent: tier0_echo, inputs: { v: '\${item.value}' } }
`);
      expect(withItems(events)).to.deep.equal([
        'workflow_start',
        'step_start:each',
        'step_end:each',
        'workflow_end',
      ]);
      expect(record.steps[0]).to.deep.include({
        status: 'success',
        input: { items: 0 },
        output: { results: [], failed: 0 },
      });
    });

    it('fails a step whose for_each is not a list, saying what it was', async () => {
      const { events, record } = await run(
        `
name: map_not_list
inputs: { files: { type: string, default: a.txt } }
steps:
  - { name: each, for_each: '\${inputs.files}', agent: tier0_echo, inputs: { v: '\${item.value}' } }
`,
      );
      expect(withItems(events)).to.deep.equal([
        'workflow_start',
        'step_start:each',
        'step_error:each',
        'step_end:each',
        'workflow_end',
      ]);
      expect(record.steps[0]).to.include({
        status: 'failed',
        error: 'for_each must evaluate to a list, got a string',
      });
      expect(record.steps[0]!.input).to.deep.equal({ items: null });
    });

    it('runs at most max_concurrency items at once', async () => {
      const { record } = await run(`
name: map_bound
steps:
  - { name: each, for_each: [1, 2, 3, 4, 5, 6, 7], max_concurrency: 3, agent: tier1_probe, inputs: { v: '\${item.value}' } }
`);
      expect(probe.max).to.equal(3);
      expect(record.steps[0]!.output).to.deep.equal({
        results: [1, 2, 3, 4, 5, 6, 7].map((v) => ({ v })),
        failed: 0,
      });
    });

    it('sends about 100 item frames for 1000 items, the last one counting them all', async () => {
      const { events, record } = await run(
        `
name: map_long
inputs: { n: { type: array } }
steps:
  - { name: each, for_each: '\${inputs.n}', max_concurrency: 8, agent: tier0_echo, inputs: { v: '\${item.value}' } }
`,
        { n: Array.from({ length: 1000 }, (_, i) => i) },
      );
      const frames = events.filter((e) => e.type === 'step_complete');
      expect(frames).to.have.length(100);
      expect(frames.at(-1)).to.deep.include({
        items: { total: 1000, done: 1000, failed: 0, running: 0 },
      });
      const output = record.steps[0]!.output as { results: { v: number }[] };
      expect(output.results.map((r) => r.v)).to.deep.equal(
        Array.from({ length: 1000 }, (_, i) => i),
      );
    });

    it('shows the counter in the engine snapshots, about 100 updates for 1000 items (the graph machine draws it)', async () => {
      // The counters the engine actor's snapshots carry (context.items.each), in order of change.
      const counters: unknown[] = [];
      runtime = createRuntime({
        runsDir,
        noLlm: true,
        defaultAdapter: adapter,
        agents,
        inspect: (event) => {
          if (
            event.type !== '@xstate.snapshot' ||
            (event.actorRef as { id?: string }).id !== 'engine'
          )
            return;
          const context = (event.snapshot as { context?: { items?: { each?: unknown } } }).context;
          const counter = context?.items?.each;
          if (counter !== undefined && counter !== counters.at(-1)) counters.push(counter);
        },
      });
      const { record } = await run(
        `
name: map_counted
inputs: { n: { type: array } }
steps:
  - { name: each, for_each: '\${inputs.n}', max_concurrency: 8, agent: tier0_echo, inputs: { v: '\${item.value}' } }
`,
        { n: Array.from({ length: 1000 }, (_, i) => i) },
      );
      expect(record.status).to.equal('success');
      if (adapter === 'native') {
        // The native scheduler has no states: nothing draws the counter.
        expect(counters).to.deep.equal([]);
        return;
      }
      // The first when the map began, then one per item frame: 101 for 1000 items.
      expect(counters).to.have.length(101);
      expect(counters[0]).to.deep.equal({ total: 1000, done: 0, failed: 0, running: 0 });
      expect(counters.at(-1)).to.deep.equal({ total: 1000, done: 1000, failed: 0, running: 0 });
      const done = counters.map((c) => (c as { done: number }).done);
      expect(done).to.deep.equal([...done].sort((x, y) => x - y));
    });

    it("holds each item's output against the run's byte budget: past it, markers", async () => {
      runtime = createRuntime({
        runsDir,
        noLlm: true,
        defaultAdapter: adapter,
        agents,
        limits: { maxRunBytes: 64 * 1024 },
      });
      const { record } = await run(
        `
name: map_budget
inputs: { t: { type: string } }
steps:
  - { name: each, for_each: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], max_concurrency: 1, agent: tier0_echo, inputs: { x: '\${inputs.t}' } }
`,
        { t: 'y'.repeat(10_000) },
      );
      const results = (record.steps[0]!.output as { results: unknown[] }).results;
      expect(results).to.have.length(10);
      expect(results[0]).to.deep.equal({ x: 'y'.repeat(10_000) });
      expect(JSON.stringify(results[9])).to.contain('"__truncated__":true');
      expect(JSON.stringify(results).length).to.be.below(64 * 1024 + 10 * 1000);
    });

    it('fail_fast aborts the items still running when one fails', async () => {
      agents.tier1_waitfail = ({ input, signal }) =>
        input.v === 'fail'
          ? new Promise((_, reject) => setImmediate(() => reject(new Error('item broke'))))
          : new Promise((_, reject) => {
              probe.running++;
              signal.addEventListener(
                'abort',
                () => {
                  probe.running--;
                  reject(new Error(String((signal.reason as Error).message)));
                },
                { once: true },
              );
            });
      const { record } = await run(`
name: map_abort_items
steps:
  - { name: each, for_each: [wait, fail, wait], max_concurrency: 3, agent: tier1_waitfail, inputs: { v: '\${item.value}' } }
`);
      expect(record.steps[0]).to.include({ status: 'failed', error: 'item 1 failed: item broke' });
      // Both waiting items got the abort when item 1 failed (the run itself was not cancelled).
      expect(probe.running).to.equal(0);
    });

    it('cancel aborts the running items and ends the step with the reason', async () => {
      runtime = createRuntime({ runsDir, noLlm: true, defaultAdapter: adapter, agents });
      const handle = await runtime.start({
        workflow: `
name: map_cancel
steps:
  - { name: each, for_each: [1, 2, 3, 4], max_concurrency: 2, agent: tier1_wait, inputs: { v: '\${item.value}' } }
`,
        input: {},
      });
      const events: WorkflowEvent[] = [];
      const collected = (async () => {
        for await (const event of handle.events) events.push(event);
      })();
      while (probe.running < 2) await new Promise((resolve) => setImmediate(resolve));
      expect(runtime.cancel(handle.runId, 'stop')).to.equal(true);
      const record = await handle.done;
      await collected;
      expect(record.status).to.equal('failed');
      expect(record.steps[0]!.status).to.equal('failed');
      expect(probe.running).to.equal(2);
      expect(release).to.have.length(2);
      expect(sequence(events).at(-1)).to.equal('workflow_end');
    });
  });
}

/**
 * A map whose body is a sub-workflow (`for_each:` + `workflow:`) on both engines, through the real
 * runtime and real files: each item a child run with its own id (`<parent>-<step>-i<item>-<attempt>`)
 * and run file linked both ways, the children's declared outputs collected in item order, the
 * exact parent event sequence (item frames; the children's events stay on their own streams),
 * max_concurrency, fail_fast and collect, cancel reaching the running children, the load checks of
 * the body, and the replay of the parent from its file.
 */
import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Agent } from '../../src/agents/types.js';
import { createRuntime } from '../../src/engine/runtime.js';
import type {
  AdapterName,
  Runtime,
  RuntimeOptions,
  WorkflowEvent,
} from '../../src/engine/types.js';
import { replayFromRecord } from '../../src/events/replay-from-record.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import {
  nextEvent,
  removeDir,
  runFiles,
  sequence,
  tempDir,
  validateEvent,
  validateRecord,
} from './helpers.js';

const CHILD = `name: child
inputs: { text: { type: string, required: true } }
outputs: { shout: { from: '\${steps.up.outputs.text}' } }
steps:
  - { name: up, agent: upper, inputs: { text: '\${inputs.text}' } }
`;

function parent(options: { concurrency?: number; policy?: string; files?: string } = {}): string {
  return `name: parent
inputs: { files: { type: array, default: ${options.files ?? '[a, b, c]'} } }
outputs: { shouts: { from: '\${steps.each.outputs.results}' } }
steps:
  - name: each
    for_each: '\${inputs.files}'
    as: file
    max_concurrency: ${options.concurrency ?? 1}
    on_item_failure: ${options.policy ?? 'fail_fast'}
    workflow: child
    inputs: { text: '\${item.file}' }
  - { name: after, agent: upper, depends_on: [each], inputs: { text: '\${steps.each.outputs.failed}' } }
`;
}

const ADAPTERS: readonly AdapterName[] = ['native', 'graph'];

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
  describe(`map over a sub-workflow: ${adapter} engine`, function () {
    this.timeout(30_000);
    let dir: string;
    let runsDir: string;
    let workflowsDir: string;
    const runtimes: Runtime[] = [];
    const probe = { running: 0, max: 0, calls: [] as string[], held: false };
    const waiting: (() => void)[] = [];

    /** `upper` upper-cases its text; fails on `bad`; while `held`, blocks until aborted. */
    const agents: Record<string, Agent> = {
      upper: async ({ input, signal }) => {
        const text = String(input.text);
        probe.calls.push(text);
        probe.running++;
        probe.max = Math.max(probe.max, probe.running);
        try {
          if (probe.held) {
            await new Promise((_, reject) => {
              signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
              waiting.shift()?.();
            });
          }
          await new Promise((resolve) => setImmediate(resolve));
          if (text === 'bad') throw new Error('bad text');
          return { output: { text: text.toUpperCase() }, modelUsed: null, tokensUsed: null };
        } finally {
          probe.running--;
        }
      },
    };

    beforeEach(async () => {
      dir = await tempDir('agentic-mapwf-');
      runsDir = join(dir, 'runs');
      workflowsDir = join(dir, 'workflows');
      await mkdir(workflowsDir);
      await writeFile(join(workflowsDir, 'child.yaml'), CHILD);
      Object.assign(probe, { running: 0, max: 0, calls: [], held: false });
      waiting.length = 0;
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

    async function run(yaml: string, runId: string) {
      await writeFile(join(workflowsDir, 'parent.yaml'), yaml);
      const handle = await make().start({ workflow: 'parent', runId });
      const events: WorkflowEvent[] = [];
      for await (const event of handle.events) events.push(event);
      const record = await handle.done;
      for (const event of events)
        expect(validateEvent(event), JSON.stringify(event)).to.equal(true);
      expect(validateRecord(record), JSON.stringify(validateRecord.errors)).to.equal(true);
      return { events, record };
    }

    it('runs each item as a child run: outputs in item order, child files linked both ways, exact sequence', async () => {
      const { events, record } = await run(parent(), 'm1');
      expect(record.status, record.error ?? '').to.equal('success');
      expect(withItems(events)).to.deep.equal([
        'workflow_start',
        'step_start:each',
        'item:each#0=success',
        'item:each#1=success',
        'item:each#2=success',
        'step_end:each=success',
        'step_start:after',
        'step_end:after=success',
        'workflow_end=success',
      ]);
      // The children's own step events stay on their own streams.
      for (const event of events) expect(event.run_id).to.equal('m1');
      const results = [{ shout: 'A' }, { shout: 'B' }, { shout: 'C' }];
      expect(record.final_output).to.deep.equal({ shouts: results });
      const each = record.steps[0]!;
      expect(each).to.deep.include({
        step_name: 'each',
        agent: 'workflow:child',
        status: 'success',
        input: { items: 3 },
        output: { results, failed: 0 },
      });
      expect(each.metadata).to.deep.equal({
        attempts: 1,
        iterations: 1,
        items: { total: 3, succeeded: 3, failed: 0 },
      });
      const ids = ['m1-each-i0-1', 'm1-each-i1-1', 'm1-each-i2-1'];
      expect(record.extra).to.deep.include({ child_run_ids: ids });
      for (const [i, id] of ids.entries()) {
        const child = await fileOf(runsDir, id);
        expect(validateRecord(child.record), JSON.stringify(validateRecord.errors)).to.equal(true);
        expect(child.record).to.deep.include({
          status: 'success',
          workflow_name: 'child',
          adapter,
          inputs: { text: ['a', 'b', 'c'][i] },
          final_output: results[i],
        });
        expect(child.record.extra).to.deep.include({
          parent_run_id: 'm1',
          parent_step: 'each',
          parent_item: i,
        });
      }
      expect((await runFiles(runsDir)).map((f) => f.record.run_id).sort()).to.deep.equal([
        'm1',
        ...ids,
      ]);
      expect(probe.calls).to.deep.equal(['a', 'b', 'c', '0']);
      // The parent's file replays its own step events.
      const file = await fileOf(runsDir, 'm1');
      const live = events.filter((e) => e.type !== 'step_complete');
      expect(sequence(replayFromRecord(file.record, file.name), true)).to.deep.equal(
        sequence(live, true),
      );
    });

    it('runs at most max_concurrency children at once', async () => {
      const { record } = await run(
        parent({ concurrency: 2, files: '[a, b, c, d, e, f, g]' }),
        'mc',
      );
      expect(record.status, record.error ?? '').to.equal('success');
      expect(probe.max).to.equal(2);
      expect(record.final_output).to.deep.equal({
        shouts: ['A', 'B', 'C', 'D', 'E', 'F', 'G'].map((shout) => ({ shout })),
      });
    });

    it('fail_fast: a failed child fails the step with its error and run id, later items never start', async () => {
      const { events, record } = await run(parent({ files: '[a, bad, c]' }), 'mf');
      expect(withItems(events)).to.deep.equal([
        'workflow_start',
        'step_start:each',
        'item:each#0=success',
        'item:each#1=failed',
        'step_error:each=failed',
        'step_end:each=failed',
        'step_end:after=skipped',
        'workflow_end=failed',
      ]);
      const error = "workflow 'child' failed (run mf-each-i1-1): step 'up' failed: bad text";
      expect(record.steps[0]).to.include({ status: 'failed', error: `item 1 failed: ${error}` });
      expect(probe.calls).to.deep.equal(['a', 'bad']);
      expect((await fileOf(runsDir, 'mf-each-i1-1')).record.status).to.equal('failed');
    });

    it('collect: a failed child is {error} in results, the step succeeds', async () => {
      const { record } = await run(parent({ policy: 'collect', files: '[a, bad, c]' }), 'mk');
      expect(record.status, record.error ?? '').to.equal('success');
      const error = "workflow 'child' failed (run mk-each-i1-1): step 'up' failed: bad text";
      expect(record.steps[0]!.output).to.deep.equal({
        results: [{ shout: 'A' }, { error }, { shout: 'C' }],
        failed: 1,
      });
    });

    it('cancelling the parent cancels the running children: they end failed with the reason', async () => {
      probe.held = true;
      await writeFile(join(workflowsDir, 'parent.yaml'), parent({ concurrency: 2 }));
      const rt = make();
      const bothWaiting = new Promise<void>((resolve) => {
        let n = 0;
        const one = (): void => {
          if (++n === 2) resolve();
        };
        waiting.push(one, one);
      });
      const handle = await rt.start({ workflow: 'parent', runId: 'mx' });
      await bothWaiting;
      expect(rt.activeRuns().sort()).to.deep.equal(['mx', 'mx-each-i0-1', 'mx-each-i1-1']);
      const childrenEnded = ['mx-each-i0-1', 'mx-each-i1-1'].map((id) =>
        nextEvent(
          (listener) => rt.subscribe(listener),
          (e) => e.run_id === id && e.type === 'workflow_end',
        ),
      );
      rt.cancel('mx', 'stop it');
      const done = await handle.done;
      expect(done).to.include({ status: 'failed', error: 'stop it' });
      await Promise.all(childrenEnded);
      expect(rt.activeRuns()).to.deep.equal([]);
      // Run files are written from the process log a moment after the records are durable.
      await rt.shutdown({ graceMs: 1000 });
      runtimes.splice(runtimes.indexOf(rt), 1);
      for (const id of ['mx-each-i0-1', 'mx-each-i1-1']) {
        expect((await fileOf(runsDir, id)).record).to.include({
          status: 'failed',
          error: 'stop it',
        });
      }
      expect(probe.calls).to.deep.equal(['a', 'b']);
    });

    it('checks the body at load like a sub-workflow step: unknown child, inputs, recursion, agent keys', async () => {
      const rt = make();
      const check = async (yaml: string) => (await rt.validate(yaml)).errors;
      expect(await check(parent().replace('workflow: child', 'workflow: nowhere'))).to.deep.equal([
        {
          loc: ['steps', 0, 'workflow'],
          msg: "unknown workflow 'nowhere'",
          type: 'value_error.unknown_workflow',
        },
      ]);
      expect(
        await check(parent().replace("{ text: '${item.file}' }", "{ txt: '${item.file}' }")),
      ).to.deep.equal([
        {
          loc: ['steps', 0, 'inputs', 'txt'],
          msg: "workflow 'child' declares no input 'txt' (its inputs: text)",
          type: 'value_error.unknown_input',
        },
        {
          loc: ['steps', 0, 'inputs'],
          msg: "workflow 'child' requires input 'text'",
          type: 'missing',
        },
      ]);
      expect(await check(parent().replace('workflow: child', 'workflow: parent'))).to.deep.equal([
        {
          loc: ['steps', 0, 'workflow'],
          msg: 'recursive sub-workflows: parent → parent',
          type: 'value_error.recursion',
        },
      ]);
      // Indirect: child maps back over parent.
      await writeFile(
        join(workflowsDir, 'loop_child.yaml'),
        `name: loop_child
steps:
  - { name: again, for_each: [1], workflow: parent }
`,
      );
      const indirect = await check(parent().replace('workflow: child', 'workflow: loop_child'));
      expect(indirect.map((e) => e.msg)).to.include(
        'recursive sub-workflows: parent → loop_child → parent',
      );
      // What the parent reads of an item's result is the child's declared outputs.
      const reads = parent().replace(
        "inputs: { text: '${steps.each.outputs.failed}' }",
        "inputs: { text: '${steps.each.outputs.results[0].shout} ${steps.each.outputs.results[1].whisper}' }",
      );
      expect(await check(reads)).to.deep.equal([
        {
          loc: ['steps', 1, 'inputs', 'text'],
          msg: "workflow 'child' declares no output 'whisper' (its outputs: shout)",
          type: 'value_error.unknown_output',
        },
      ]);
      const withTools = await check(
        parent().replace('workflow: child', 'workflow: child\n    tools: [http_get]'),
      );
      expect(withTools.map((e) => e.loc.join('.'))).to.include('steps.0.tools');
      // agent and workflow together are two bodies.
      const both = await check(
        parent().replace('workflow: child', 'workflow: child\n    agent: tier0_echo'),
      );
      expect(both.map((e) => e.type)).to.include('value_error.step_kind');
    });
  });
}

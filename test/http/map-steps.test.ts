/**
 * Map steps (`for_each:`) through a real service: the shipped example runs, the graph machine
 * shows the map as readable states, and `GET /api/runs/{run_id}/explain` counts the items of a
 * running map step, on both engines.
 */
import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkflowEvent } from '../../src/engine/types.js';
import type { RunExplanationResponse } from '../../src/generated/api/run-explanation-response.js';
import { call, startTestService, type TestService } from './harness.js';

const SLOW_ITEMS = `name: map_slow
steps:
  - name: each
    for_each: [0, 0, 600000, 600000, 600000]
    as: ms
    max_concurrency: 2
    agent: tier0_sleep
    inputs: { ms: '\${item.ms}' }
`;

describe('map steps over HTTP', function () {
  this.timeout(60_000);
  let svc: TestService | undefined;

  afterEach(async () => {
    await svc?.dispose();
    svc = undefined;
  });

  it('runs the shipped map_demo: results in list order', async () => {
    svc = await startTestService();
    const res = await call(svc.url, 'POST', '/api/run', { workflow: 'map_demo' });
    expect(res.status, res.text).to.equal(200);
    const record = await svc.finished((res.body as { run_id: string }).run_id);
    expect(record.status).to.equal('success');
    expect(record.final_output).to.deep.equal({
      trimmed: [
        { result: 'README.md' },
        { result: 'docs/limits.md' },
        { result: 'src/index.ts' },
        { result: 'package.json' },
      ],
      failed: 0,
      counts: [{ count: 9 }, { count: 14 }, { count: 12 }, { count: 12 }],
    });
  });

  it('runs the shipped map_sub_workflow_demo: one child run per text, outputs in list order', async () => {
    svc = await startTestService();
    const res = await call(svc.url, 'POST', '/api/run', { workflow: 'map_sub_workflow_demo' });
    expect(res.status, res.text).to.equal(200);
    const runId = (res.body as { run_id: string }).run_id;
    const record = await svc.finished(runId);
    expect(record.status, record.error ?? '').to.equal('success');
    const texts = ['first text', 'second', 'the third one'];
    expect(record.final_output).to.deep.equal({
      summaries: texts.map((text) => ({
        processed: text,
        length: text.length,
        summary: `[demo] ${text} (${text.length} characters)`,
      })),
      failed: 0,
      report: `first child said [demo] first text (10 characters)`,
    });
    const ids = [0, 1, 2].map((i) => `${runId}-summarise_each-i${i}-1`);
    expect(record.extra).to.deep.include({ child_run_ids: ids });
    for (const [i, id] of ids.entries()) {
      const child = await svc.finished(id);
      expect(child.extra).to.deep.include({
        parent_run_id: runId,
        parent_step: 'summarise_each',
        parent_item: i,
      });
    }
  });

  it('shows a map step in the graph machine: kind, map settings, a running state saying so', async () => {
    svc = await startTestService();
    const res = await call(svc.url, 'GET', '/api/workflows/map_demo/machine');
    expect(res.status, res.text).to.equal(200);
    const body = res.body as {
      states: Record<
        string,
        { states: Record<string, { meta?: unknown; states: Record<string, unknown> }> }
      >;
    };
    const region = body.states.running!.states.trim_each!;
    expect(region.meta).to.deep.include({
      kind: 'map',
      agent: 'tier0_process',
      map: {
        forEach: '${steps.list.outputs.files}',
        as: 'file',
        maxConcurrency: 2,
        onItemFailure: 'collect',
        counter: 'context.items.trim_each',
      },
    });
    // The counter's event and action are in the machine (the running state updates it).
    const root = body.states.running as unknown as { on: Record<string, unknown> };
    expect(root.on['step.items']).to.deep.include({ actions: [{ type: 'countItems' }] });
    const running = region.states.running as { description: string };
    expect(running.description).to.match(
      /^Running the items of \$\{steps\.list\.outputs\.files\} through agent tier0_process, up to 2 at once/,
    );
  });

  for (const adapter of ['native', 'graph'] as const) {
    it(`explains a running map step with its item counts (${adapter})`, async () => {
      const service = (svc = await startTestService());
      await writeFile(join(service.workflowsDir, 'map_slow.yaml'), SLOW_ITEMS);
      const seen: WorkflowEvent[] = [];
      let wake: (() => void) | undefined;
      const off = service.runtime.subscribe((event) => {
        seen.push(event);
        wake?.();
      });
      const res = await call(service.url, 'POST', '/api/run', {
        workflow: 'map_slow',
        adapter,
      });
      expect(res.status, res.text).to.equal(200);
      const runId = (res.body as { run_id: string }).run_id;
      // Items 0 and 1 end at once; their second frame counts two done.
      const twoDone = (): boolean =>
        seen.some((e) => e.run_id === runId && e.type === 'step_complete' && e.items?.done === 2);
      while (!twoDone()) await new Promise<void>((resolve) => (wake = resolve));
      off();
      const answer = await call(service.url, 'GET', `/api/runs/${runId}/explain`);
      expect(answer.status, answer.text).to.equal(200);
      const step = (answer.body as RunExplanationResponse).steps.find((s) => s.step === 'each')!;
      expect(step.status).to.equal('running');
      expect(step.items).to.deep.equal({ total: 5, done: 2, failed: 0, running: 2, pending: 1 });
      expect(step.waits[0]!.message).to.match(
        /items: 2 of 5 done, 0 failed, 2 running, 1 pending$/,
      );
      const cancelled = await call(service.url, 'POST', `/api/runs/${runId}/cancel`);
      expect(cancelled.status).to.equal(200);
      const record = await service.finished(runId);
      expect(record.steps[0]!.metadata.items).to.deep.equal({ total: 5, succeeded: 2, failed: 0 });
    });
  }
});

import { expect } from 'chai';
import { join } from 'node:path';
import { packageRoot } from '../../../src/config/index.js';
import { createDatasetCatalogue } from '../../../src/eval/datasets.js';
import { createEvaluator } from '../../../src/eval/evaluator.js';
import { createLlmJudge } from '../../../src/eval/judge.js';
import type { RunRecord } from '../../../src/generated/run-record.js';
import type { LlmClient } from '../../../src/llm/types.js';
import { createSilentLogger } from '../../../src/log.js';
import type { CompiledWorkflow } from '../../../src/workflow/types.js';

/** A model that answers only when aborted (then it rejects with the abort reason). */
const silentModel: LlmClient = {
  complete: (request) =>
    new Promise((_, reject) => {
      request.signal.addEventListener('abort', () => reject(request.signal.reason as Error), {
        once: true,
      });
    }),
};

const workflow = {
  name: 'wf',
  description: 'answers',
  inputs: { text: { type: 'string' } },
  outputNames: ['answer'],
  optionalOutputs: [],
  document: { name: 'wf', steps: [{ name: 's', agent: 'tier0_echo' }] },
} as unknown as CompiledWorkflow;

const record = {
  run_id: 'r1',
  workflow_name: 'wf',
  status: 'success',
  inputs: {},
  steps: [],
  final_output: { answer: 'four bytes' },
  success_rate: 100,
  total_duration_ms: 5,
  start_time: '2026-01-01T00:00:00.000Z',
  extra: {},
} as unknown as RunRecord;

describe('evaluator', () => {
  it('maps a sample onto the inputs with the request winning, and picks the rubric', async () => {
    const evaluator = createEvaluator({
      datasets: createDatasetCatalogue({
        evalDir: join(packageRoot, 'workflows', 'eval'),
        localDir: '/nonexistent',
      }),
      judge: createLlmJudge({ llm: silentModel }),
      runsDir: '/nonexistent',
      persist: false,
      logger: createSilentLogger(),
    });
    const prepared = await evaluator.prepare(
      {
        ...workflow,
        inputs: { text: { type: 'string' }, question: { type: 'string' } },
      } as unknown as CompiledWorkflow,
      { dataset_source: 'repository', dataset_id: 'question_answering', sample_index: 1 },
      { text: 'mine' },
      ['body', 'evaluation'],
    );
    expect(prepared.input).to.deep.equal({
      text: 'mine',
      question:
        'How many bytes does UTF-8 use for a character outside the Basic Multilingual Plane?',
    });
    expect(prepared.settings).to.deep.equal({
      enabled: true,
      status: 'pending',
      dataset_source: 'repository',
      dataset_id: 'question_answering',
      sample_index: 1,
      sample_id: 'qa-002',
      rubric_id: 'default',
    });
    expect(prepared.expected).to.equal('Four bytes');
  });

  it('drain({abort}) aborts a judge that does not answer: the run is scored, the judge reported failed', async () => {
    const scored: RunRecord[] = [];
    const events: string[] = [];
    const evaluator = createEvaluator({
      datasets: createDatasetCatalogue({
        evalDir: join(packageRoot, 'workflows', 'eval'),
        localDir: '/nonexistent',
      }),
      judge: createLlmJudge({ llm: silentModel }),
      runsDir: '/nonexistent',
      persist: false,
      onScored: (r) => scored.push(r),
      publish: (event) => events.push(event.type),
      logger: createSilentLogger(),
    });
    const prepared = await evaluator.prepare(workflow, {}, {}, ['body']);
    const pending = evaluator.complete(Promise.resolve(record), workflow, prepared);
    await evaluator.drain({ abort: true });
    const stored = await pending;
    expect(stored).to.include({ status: 'complete', evaluator: 'llm_judge' });
    expect(stored.judge).to.deep.equal({
      status: 'failed',
      model: null,
      attempts: 0,
      error: 'the service is shutting down',
    });
    expect(events).to.deep.equal(['evaluation_start', 'evaluation_complete']);
    expect(scored[0]?.extra.evaluation).to.deep.equal(stored);
  });

  it('drain({abort}) also ends a judge call in flight', async () => {
    let called!: () => void;
    const calling = new Promise<void>((resolve) => (called = resolve));
    const llm: LlmClient = {
      complete(request) {
        called();
        return silentModel.complete(request);
      },
    };
    const evaluator = createEvaluator({
      datasets: createDatasetCatalogue({
        evalDir: join(packageRoot, 'workflows', 'eval'),
        localDir: '/nonexistent',
      }),
      judge: createLlmJudge({ llm }),
      runsDir: '/nonexistent',
      persist: false,
      logger: createSilentLogger(),
    });
    const prepared = await evaluator.prepare(workflow, {}, {}, ['body']);
    const pending = evaluator.complete(Promise.resolve(record), workflow, prepared);
    await calling;
    await evaluator.drain({ abort: true });
    expect((await pending).judge).to.include({ status: 'failed', attempts: 1 });
  });
});

import { InvalidArgumentError, type Command } from 'commander';
import { ERROR_CODES, isAppError } from '../../errors.js';
import type { BatchItem } from '../../eval/batch.js';
import type { EvalBatchResponse } from '../../generated/api/eval-batch-response.js';
import { err, out } from '../io.js';
import { withSettings, type SettingsOptions } from '../settings-options.js';
import { workflowNotFound } from '../workflow-arg.js';
import type { CliContext } from './index.js';

interface EvalOptions extends SettingsOptions {
  dataset: { source: string; id: string };
  limit?: number;
  samples?: [number, ...number[]];
  rubric?: string;
  concurrency?: number;
  json?: boolean;
}

function parseDataset(text: string): { source: string; id: string } {
  const match = /^(repository|local)\/(.+)$/.exec(text);
  if (match?.[1] === undefined || match[2] === undefined) {
    throw new InvalidArgumentError('expected <source>/<id>, source repository or local');
  }
  return { source: match[1], id: match[2] };
}

function parseCount(text: string): number {
  if (!/^[1-9][0-9]{0,3}$/.test(text))
    throw new InvalidArgumentError('expected a positive integer');
  return Number(text);
}

function parseIndices(text: string): [number, ...number[]] {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.some((part) => !/^[0-9]{1,6}$/.test(part))) {
    throw new InvalidArgumentError('expected sample indices like 0,2,5');
  }
  const [first, ...rest] = [...new Set(parts.map(Number))];
  return [first ?? 0, ...rest];
}

const BAR_WIDTH = 24;

/** One progress line: the bar, then the sample just finished. */
function progress(batch: EvalBatchResponse, item: BatchItem): string {
  const done = Math.round((batch.completed / batch.total) * BAR_WIDTH);
  const bar = `[${'#'.repeat(done)}${'-'.repeat(BAR_WIDTH - done)}] ${batch.completed}/${batch.total}`;
  const score = item.overall_score === null ? '-' : item.overall_score.toFixed(2);
  return `${bar} ${item.sample_id} ${item.status} ${score} ${item.grade ?? ''}`.trimEnd();
}

/** The aggregate table printed at the end. */
export function batchTable(batch: EvalBatchResponse): string {
  const rows = [
    ['sample', 'id', 'status', 'score', 'grade', 'passed', 'run'],
    ...batch.items.map((i) => [
      String(i.sample_index),
      i.sample_id,
      i.status,
      i.overall_score === null ? '-' : i.overall_score.toFixed(2),
      i.grade ?? '-',
      i.passed === null ? '-' : i.passed ? 'yes' : 'no',
      i.run_id ?? i.error ?? '-',
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const lines = rows.map((r) =>
    r
      .map((cell, c) => cell.padEnd(widths[c]!))
      .join('  ')
      .trimEnd(),
  );
  const a = batch.aggregate;
  const grades = Object.entries(a.grade_distribution)
    .map(([grade, n]) => `${grade} ${n}`)
    .join(', ');
  lines.push(
    '',
    `workflow ${batch.workflow} · dataset ${batch.dataset_source}/${batch.dataset_id} · rubric ${batch.rubric_id}`,
    `mean score ${a.mean_score === null ? '-' : a.mean_score.toFixed(2)} · pass rate ${
      a.pass_rate === null ? '-' : `${(a.pass_rate * 100).toFixed(1)}%`
    } · grades ${grades} · failures ${a.failures} · scored ${a.scored}/${batch.total}`,
  );
  return lines.join('\n');
}

/**
 * `agentic eval <workflow> --dataset <source>/<id>`: the batch evaluation of the HTTP API from
 * the terminal: a progress bar on stderr, the per-sample table and aggregate on stdout (or the
 * batch as JSON with `--json`). Exit 1 when a sample failed to run or to be scored.
 */
export function registerEval(program: Command, context: CliContext): void {
  withSettings(
    program
      .command('eval <workflow>')
      .description('run a workflow over dataset samples and score each run (batch evaluation)')
      .requiredOption(
        '-d, --dataset <source/id>',
        'dataset, e.g. repository/question_answering',
        parseDataset,
      )
      .option('-n, --limit <n>', 'the first N samples (default: all)', parseCount)
      .option(
        '-s, --samples <list>',
        'sample indices, e.g. 0,2,5 (instead of --limit)',
        parseIndices,
      )
      .option('--rubric <id>', 'rubric id (default: the workflow’s, else default)')
      .option('-c, --concurrency <n>', 'samples run at once (default 2, at most 16)', parseCount)
      .option('--json', 'print the batch (items and aggregate) as JSON on stdout'),
  ).action(async (workflow: string, options: EvalOptions) => {
    const { settings } = await import('../settings.js');
    const config = settings(options, context.env);
    const [
      { createBatchManager },
      { createDatasetCatalogue },
      { resolveEvalDir },
      { createEvaluator },
      { createDeterministicJudge, createLlmJudge },
      { createLlmService },
      { createLogger },
      { composeCommandRuntime },
    ] = await Promise.all([
      import('../../eval/batch.js'),
      import('../../eval/datasets.js'),
      import('../../eval/eval-dir.js'),
      import('../../eval/evaluator.js'),
      import('../../eval/judge.js'),
      import('../../llm/llm-service.js'),
      import('../../log.js'),
      import('../../service/compose.js'),
    ]);
    // One LLM layer for the runs' LLM steps and the judge (none in no-LLM mode).
    const llm = config.noLlm ? undefined : createLlmService(config.llm);
    const runtime = await composeCommandRuntime(config, llm);
    const datasets = createDatasetCatalogue({
      evalDir: resolveEvalDir(config.workflowsDir),
      localDir: config.localDatasetsDir,
      maxFileBytes: config.maxDatasetBytes,
      cacheBytes: config.datasetCacheBytes,
    });
    const evaluator = createEvaluator({
      datasets,
      judge:
        llm === undefined
          ? createDeterministicJudge()
          : createLlmJudge({ llm: llm.router, model: config.judgeModel }),
      runsDir: config.runsDir,
      persist: true,
      logger: createLogger({
        format: config.logFormat,
        level: 'warn',
        destination: process.stderr,
      }),
    });
    const tty = process.stderr.isTTY === true;
    const batches = createBatchManager({
      runtime,
      evaluator,
      datasets,
      onProgress: (batch, item) => {
        if (options.json === true || item === undefined) return;
        // On a terminal the bar redraws in place; in a log each sample gets its line.
        if (tty) process.stderr.write(`\r\x1b[K${progress(batch, item)}`);
        else err(progress(batch, item));
      },
    });
    try {
      const started = await batches.start({
        workflow,
        dataset_source: options.dataset.source,
        dataset_id: options.dataset.id,
        ...(options.samples !== undefined ? { sample_indices: options.samples } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        ...(options.rubric !== undefined ? { rubric_id: options.rubric } : {}),
        ...(options.concurrency !== undefined
          ? { concurrency: Math.min(options.concurrency, 16) }
          : {}),
      });
      const batch = await batches.finished(started.batch_id);
      if (tty && options.json !== true) process.stderr.write('\n');
      out(options.json === true ? JSON.stringify(batch, null, 2) : batchTable(batch));
      if (batch.aggregate.failures > 0) process.exitCode = 1;
    } catch (error) {
      if (isAppError(error) && error.code === ERROR_CODES.WORKFLOW_NOT_FOUND) {
        throw workflowNotFound(workflow, config.workflowsDir);
      }
      throw error;
    } finally {
      await batches.close();
      await runtime.shutdown({ graceMs: 0 });
      await evaluator.drain();
      await llm?.close();
    }
  });
}

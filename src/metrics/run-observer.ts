/**
 * Feeds a runtime's run and step metrics from its wire events (`runtime.subscribe`), so the
 * engine carries no metrics code and pays nothing when metrics are off.
 */
import type { Counter, Histogram } from 'prom-client';
import type { Runtime } from '../engine/types.js';
import type { ServiceMetrics } from './service-metrics.js';

type Observed = Pick<Runtime, 'subscribe' | 'activeRuns'>;

/**
 * The labelled child of a metric per label combination, kept: prom-client hashes the label
 * object on every `observe`/`inc` (sorting keys, building a string), which was most of the
 * observer's per-step cost in `npm run bench`. Bounded, since every label value is.
 */
function childCache<T>(make: (...values: string[]) => T): (...values: string[]) => T {
  const children = new Map<string, T>();
  return (...values) => {
    const key = values.join('\u0000');
    let child = children.get(key);
    if (child === undefined) {
      child = make(...values);
      children.set(key, child);
    }
    return child;
  };
}

/**
 * Observes `runtime` into `metrics`; also points the active-runs gauge at it. Returns the
 * function that stops observing.
 */
export function observeRuntime(runtime: Observed, metrics: ServiceMetrics): () => void {
  // workflow_end names neither the adapter nor (always) the workflow: kept from workflow_start,
  // one entry per active run, removed at its end.
  const labels = new Map<string, { workflow: string; adapter: string }>();
  metrics.readGauges({ activeRuns: () => runtime.activeRuns().length });
  // Label order as declared in service-metrics.ts.
  const step = childCache((agent, status) => metrics.stepDuration.labels(agent, status));
  const retry = childCache((agent) => metrics.retries.labels(agent));
  const started = childCache((workflow, adapter) => metrics.runsStarted.labels(workflow, adapter));
  const finished = childCache(
    (
      workflow,
      adapter,
      status,
    ): [Counter.Internal, Histogram.Internal<'workflow' | 'adapter' | 'status'>] => [
      metrics.runsFinished.labels(workflow, adapter, status),
      metrics.runDuration.labels(workflow, adapter, status),
    ],
  );
  return runtime.subscribe((event) => {
    switch (event.type) {
      case 'workflow_start': {
        const run = {
          workflow: metrics.workflowLabel(event.workflow_name),
          adapter: metrics.adapterLabel(event.adapter),
        };
        labels.set(event.run_id, run);
        started(run.workflow, run.adapter).inc();
        return;
      }
      case 'workflow_end': {
        const run = labels.get(event.run_id) ?? {
          workflow: metrics.workflowLabel(event.workflow_name),
          adapter: metrics.adapterLabel(undefined),
        };
        labels.delete(event.run_id);
        const [count, duration] = finished(run.workflow, run.adapter, event.status);
        count.inc();
        if (event.duration_ms !== undefined) duration.observe(event.duration_ms / 1000);
        return;
      }
      case 'step_end':
        step(metrics.agentLabel(event.agent), event.status).observe(event.duration_ms / 1000);
        return;
      case 'step_error':
        if (event.status === 'retrying') retry(metrics.agentLabel(event.agent)).inc();
        return;
      case 'step_start':
      case 'step_complete':
      case 'token_delta':
      case 'error':
      case 'evaluation_start':
      case 'evaluation_complete':
      case 'approval_required':
      case 'approval_decision':
        return;
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  });
}

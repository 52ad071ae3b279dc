/**
 * Feeds a runtime's run and step metrics from its wire events (`runtime.subscribe`), so the
 * engine carries no metrics code and pays nothing when metrics are off. Per step this is one
 * `CountingHistogram` count (plain numbers, read at scrape time): prom-client's own
 * `observe` hashes its labels on every call (0.4–1 µs here, over 5 % of a no-op step).
 */
import type { Runtime } from '../engine/types.js';
import type { ServiceMetrics } from './service-metrics.js';
import { STEP_STATUS } from '../workflow/types.js';

type Observed = Pick<Runtime, 'subscribe' | 'activeRuns'>;

/**
 * Observes `runtime` into `metrics`; also points the active-runs gauge at it. Returns the
 * function that stops observing.
 */
export function observeRuntime(runtime: Observed, metrics: ServiceMetrics): () => void {
  // workflow_end names neither the adapter nor (always) the workflow: kept from workflow_start,
  // one entry per active run, removed at its end.
  const labels = new Map<string, { workflow: string; adapter: string }>();
  metrics.readGauges({ activeRuns: () => runtime.activeRuns().length });
  return runtime.subscribe((event) => {
    switch (event.type) {
      case 'workflow_start': {
        const run = {
          workflow: metrics.workflowLabel(event.workflow_name),
          adapter: metrics.adapterLabel(event.adapter),
        };
        labels.set(event.run_id, run);
        // A resumed run was counted as started by the process that started it.
        if (event.resumed === true) metrics.runsResumed.inc(run);
        else metrics.runsStarted.inc(run);
        return;
      }
      case 'workflow_end': {
        const run = labels.get(event.run_id) ?? {
          workflow: metrics.workflowLabel(event.workflow_name),
          adapter: metrics.adapterLabel(undefined),
        };
        labels.delete(event.run_id);
        const finished = { ...run, status: event.status };
        metrics.runsFinished.inc(finished);
        if (event.duration_ms !== undefined) {
          metrics.runDuration.observe(finished, event.duration_ms / 1000);
        }
        return;
      }
      case 'step_end':
        metrics.stepDuration.observe(
          { agent: metrics.agentLabel(event.agent), status: event.status },
          event.duration_ms / 1000,
        );
        return;
      case 'step_error':
        if (event.status === STEP_STATUS.RETRYING)
          metrics.retries.inc({ agent: metrics.agentLabel(event.agent) });
        return;
      case 'approval_decision':
        metrics.approvals.inc({
          decision: event.decision,
          provider: metrics.approvalProviderLabel(event.provider),
        });
        return;
      case 'step_start':
        if (event.attempt !== undefined && event.attempt > 1)
          metrics.stepsReexecuted.inc({ agent: metrics.agentLabel(event.agent) });
        return;
      case 'step_complete':
      case 'token_delta':
      case 'error':
      case 'evaluation_start':
      case 'evaluation_complete':
      case 'approval_required':
        return;
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  });
}

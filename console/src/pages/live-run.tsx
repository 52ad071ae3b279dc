import { useEffect, useMemo, useState } from 'preact/hooks';
import type { CancelRunResponse } from '../../../src/generated/api/cancel-response';
import type { DagResponse } from '../../../src/generated/api/dag-response';
import { api, ApiError, openRunSocket, seg, useApi } from '../api';
import { Dag } from '../components/dag';
import { ErrorNote } from '../components/error-note';
import { JsonView } from '../components/json-view';
import { Messages } from '../components/messages';
import { href } from '../router';
import { applyEvent, emptyRun, type RunView, type StepView } from '../run-view';
import { STEP_STATE, stateClass, type StepState } from '../step-states';

/** A run watched live: its DAG coloured by each step's state as events arrive, details, cancel. */
export function LiveRunPage({ runId }: { runId: string }) {
  const [run, setRun] = useState<RunView>(() => emptyRun(runId));
  const [closed, setClosed] = useState<number | undefined>(undefined);
  const [connection, setConnection] = useState(0);
  const [selected, setSelected] = useState<string | undefined>(undefined);

  useEffect(() => {
    setRun(emptyRun(runId));
    setClosed(undefined);
    const socket = openRunSocket(
      runId,
      (event) => setRun((view) => applyEvent(view, event)),
      (code) => setClosed(code),
    );
    return () => socket.close();
  }, [runId, connection]);

  const dag = useApi<DagResponse>(
    run.workflow === undefined ? null : `/api/workflows/${seg(run.workflow)}/dag`,
  );
  const nodes = useMemo(
    () =>
      (dag.data?.nodes ?? []).map((node) => ({
        id: node.id,
        detail:
          node.kind === undefined || node.kind === 'agent' ? (node.agent ?? 'agent') : node.kind,
      })),
    [dag.data],
  );
  const states: Record<string, StepState> = {};
  const notes: Record<string, string> = {};
  for (const node of nodes) states[node.id] = run.steps[node.id]?.state ?? STEP_STATE.pending;
  for (const step of Object.values(run.steps)) {
    states[step.name] = step.state;
    const note = stepNote(step);
    if (note !== '') notes[step.name] = note;
  }
  const stepNames = [
    ...nodes.map((node) => node.id),
    ...run.order.filter((name) => !nodes.some((n) => n.id === name)),
  ];
  const finished = run.status === 'success' || run.status === 'failed';
  const current = selected === undefined ? undefined : (run.steps[selected] ?? undefined);

  return (
    <section aria-labelledby="run-title">
      <p class="crumbs">
        <a href={href('workflows')}>Workflows</a> /{' '}
        {run.workflow === undefined ? null : (
          <>
            <a href={href('workflows', run.workflow)}>{run.workflow}</a> /
          </>
        )}
      </p>
      <h1 id="run-title">Run {runId}</h1>
      <div class="run-head panel">
        <p>
          Status:{' '}
          <span class={`badge status-${run.status}`} data-testid="run-status" aria-live="polite">
            {run.status === 'pending' ? 'waiting for the run to start' : run.status}
          </span>
          {run.adapter === undefined ? null : <span class="hint"> · adapter {run.adapter}</span>}
          {run.durationMs === undefined ? null : (
            <span class="hint"> · {formatMs(run.durationMs)}</span>
          )}
        </p>
        <CancelButton runId={runId} finished={finished} />
        {closed !== undefined && !finished ? (
          <p role="status">
            The event stream closed ({closed}).{' '}
            <button type="button" class="secondary" onClick={() => setConnection((n) => n + 1)}>
              Reconnect
            </button>
          </p>
        ) : null}
      </div>
      {run.error ? (
        <p class="error" role="alert">
          {run.error}
        </p>
      ) : null}
      {run.errors.map((error) => (
        <p class="error" key={error}>
          {error}
        </p>
      ))}
      <div class="split">
        <div class="panel">
          <h2>Steps</h2>
          <ErrorNote error={dag.error} />
          {nodes.length > 0 ? (
            <Dag
              label={`Steps of run ${runId}`}
              nodes={nodes}
              edges={dag.data?.edges ?? []}
              states={states}
              notes={notes}
              selected={selected}
              onSelect={setSelected}
            />
          ) : null}
          <ul class="step-list" aria-label="Step states">
            {stepNames.map((name) => (
              <li key={name}>
                <button
                  type="button"
                  class="step-button"
                  aria-pressed={selected === name}
                  data-step={name}
                  onClick={() => setSelected(name)}
                >
                  <span
                    class={`dot ${stateClass(states[name] ?? STEP_STATE.pending)}`}
                    aria-hidden="true"
                  />
                  {name}
                  <span class="hint"> {states[name] ?? STEP_STATE.pending}</span>
                  {notes[name] ? <span class="hint"> · {notes[name]}</span> : null}
                </button>
              </li>
            ))}
          </ul>
        </div>
        <div class="panel step-detail" aria-live="off">
          {selected === undefined ? (
            <p class="hint">Select a step to see its inputs, outputs, messages and tokens.</p>
          ) : (
            <StepDetail name={selected} step={current} run={run} />
          )}
        </div>
      </div>
      {finished ? (
        <div class="panel">
          <h2>Final output</h2>
          {run.finalOutput === undefined ? (
            <p class="hint">None.</p>
          ) : (
            <JsonView value={run.finalOutput} label="Final output" />
          )}
          {run.evaluation === undefined ? null : <EvaluationNote evaluation={run.evaluation} />}
        </div>
      ) : null}
    </section>
  );
}

function stepNote(step: StepView): string {
  const parts: string[] = [];
  if (step.items !== undefined) {
    const { done, total, failed, running } = step.items;
    parts.push(
      `${done}/${total} items${failed > 0 ? `, ${failed} failed` : ''}${running > 0 ? `, ${running} running` : ''}`,
    );
  }
  if (step.attempt !== undefined && step.attempt > 1) parts.push(`attempt ${step.attempt}`);
  if (step.children.length > 0)
    parts.push(`${step.children.length} child run${step.children.length > 1 ? 's' : ''}`);
  return parts.join(', ');
}

function CancelButton({ runId, finished }: { runId: string; finished: boolean }) {
  const [state, setState] = useState<'idle' | 'sending' | 'sent'>('idle');
  const [error, setError] = useState<Error | undefined>(undefined);
  if (finished && state !== 'sent') return null;
  const cancel = async (): Promise<void> => {
    setState('sending');
    setError(undefined);
    try {
      await api.post<CancelRunResponse>(`/api/runs/${seg(runId)}/cancel`);
      setState('sent');
    } catch (failure) {
      setState('idle');
      // 409: it finished meanwhile; the stream says how.
      if (!(failure instanceof ApiError && failure.status === 409)) {
        setError(failure instanceof Error ? failure : new Error(String(failure)));
      }
    }
  };
  return (
    <div class="row">
      <button
        type="button"
        class="danger"
        disabled={state !== 'idle' || finished}
        onClick={() => void cancel()}
      >
        {state === 'sent' ? 'Cancel requested' : state === 'sending' ? 'Cancelling…' : 'Cancel run'}
      </button>
      <ErrorNote error={error} />
    </div>
  );
}

function StepDetail({
  name,
  step,
  run,
}: {
  name: string;
  step: StepView | undefined;
  run: RunView;
}) {
  if (step === undefined) {
    return (
      <>
        <h2>{name}</h2>
        <p>Pending: the step has not started.</p>
      </>
    );
  }
  const facts: [string, string][] = [
    ['State', step.state],
    ['Agent', step.agent ?? ''],
    ['Model', step.model ?? ''],
    ['Tier', step.tier ?? ''],
    ['Attempt', step.attempt === undefined ? '' : String(step.attempt)],
    ['Duration', step.durationMs === undefined ? '' : formatMs(step.durationMs)],
    [
      'Tokens',
      step.tokens === undefined || step.tokens === null
        ? ''
        : `${step.tokens.input} in, ${step.tokens.output} out, ${step.tokens.total} total`,
    ],
    ['Iteration', step.iteration === undefined ? '' : String(step.iteration)],
    ['Skipped because', step.skipReason ?? ''],
    [
      'Retry in',
      step.state === STEP_STATE.retrying && step.retryInMs !== undefined
        ? formatMs(step.retryInMs)
        : '',
    ],
  ];
  if (step.cost !== undefined) {
    for (const [key, value] of Object.entries(step.cost)) {
      facts.push([
        key.replace(/_/g, ' '),
        typeof value === 'string' ? value : JSON.stringify(value),
      ]);
    }
  }
  return (
    <>
      <h2>
        <span class={`dot ${stateClass(step.state)}`} aria-hidden="true" /> {name}
      </h2>
      <dl class="facts">
        {facts
          .filter(([, value]) => value !== '')
          .map(([label, value]) => (
            <div key={label}>
              <dt>{label}</dt>
              <dd data-fact={label}>{value}</dd>
            </div>
          ))}
      </dl>
      {step.waiting === undefined ? null : (
        <p class="waiting" role="status">
          {step.waiting.kind === 'input'
            ? `Waiting for a person's answer${step.waiting.prompt ? `: ${step.waiting.prompt}` : ''}`
            : `Waiting for approval of tool ${step.waiting.tool}`}{' '}
          (request <code>{step.waiting.callId}</code>).
        </p>
      )}
      {step.decisions.map((decision) => (
        <p key={decision}>Decision: {decision}</p>
      ))}
      {step.error ? (
        <p class="error">
          Error: <span data-fact="error">{step.error}</span>
        </p>
      ) : null}
      {step.items === undefined ? null : (
        <p>
          Items: {step.items.done} of {step.items.total} done, {step.items.failed} failed,{' '}
          {step.items.running} running
        </p>
      )}
      {step.itemFailures.length > 0 ? (
        <ul aria-label="Failed items">
          {step.itemFailures.map((item) => (
            <li key={item.index}>
              item {item.index}: {item.error ?? 'failed'} ({item.attempts} attempts)
            </li>
          ))}
        </ul>
      ) : null}
      {step.children.length > 0 ? (
        <>
          <h3>Child runs</h3>
          <ul>
            {step.children.map((child) => {
              const steps = run.children[child]?.steps ?? {};
              return (
                <li key={child}>
                  <a href={href('runs', child, 'live')}>{child}</a>{' '}
                  <span class="hint">
                    {Object.entries(steps)
                      .map(([childStep, state]) => `${childStep}: ${state}`)
                      .join(', ')}
                  </span>
                </li>
              );
            })}
          </ul>
        </>
      ) : null}
      {step.stream === '' ? null : (
        <>
          <h3>Token stream</h3>
          <pre class="stream" aria-label={`Tokens streamed by ${name}`}>
            {step.stream}
          </pre>
        </>
      )}
      {step.input === undefined ? null : (
        <>
          <h3>Inputs</h3>
          <JsonView value={step.input} label={`Inputs of ${name}`} />
        </>
      )}
      {step.output === undefined ? null : (
        <>
          <h3>Outputs</h3>
          <JsonView value={step.output} label={`Outputs of ${name}`} />
        </>
      )}
      {step.messages === undefined || step.messages.length === 0 ? null : (
        <>
          <h3>Messages and tool calls</h3>
          <Messages messages={step.messages} />
        </>
      )}
    </>
  );
}

function EvaluationNote({ evaluation }: { evaluation: NonNullable<RunView['evaluation']> }) {
  if (evaluation.state === 'scoring') return <p>Evaluation: scoring…</p>;
  if (evaluation.error) return <p class="error">Evaluation failed: {evaluation.error}</p>;
  return (
    <p>
      Evaluation: score {evaluation.score ?? '–'}
      {evaluation.grade ? `, grade ${evaluation.grade}` : ''}
      {evaluation.passed === undefined || evaluation.passed === null
        ? ''
        : evaluation.passed
          ? ', passed'
          : ', not passed'}
    </p>
  );
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

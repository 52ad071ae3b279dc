/**
 * The Inbox: what waits for a person (`GET /api/approvals`, polled every 2 s): tool calls waiting
 * for approval (approve or deny, with a reason), human steps' questions (a form generated from
 * their JSON Schema; the service's 422 shown when the answer does not match) and runs paused at
 * their budget (kind budget: raise it, or stop the run). Each is answered in place with
 * `POST /api/approvals/{call_id}`.
 */
import { useState } from 'preact/hooks';
import type {
  ApprovalsResponse,
  PendingApproval,
} from '../../../src/generated/api/approvals-response';
import { api, ApiError, seg, useApi } from '../api';
import { ErrorNote } from '../components/error-note';
import { Facts, formatTime, JsonBlock, usePolling } from '../components/run-facts';
import { SchemaAnswerForm } from '../components/schema-answer-form';
import { href } from '../router';

/** A pending request; `budget` items (kind budget) carry what the run spent and its limits. */
type InboxItem = Omit<PendingApproval, 'kind'> & {
  kind?: 'input' | 'budget';
  spent?: { tokens: number; cost_usd: number | null };
  budget?: { max_cost_usd?: number; max_tokens?: number };
};

const POLL_MS = 2000;

export function InboxPage() {
  const { data, error, loading, reload } = useApi<ApprovalsResponse>('/api/approvals');
  usePolling(reload, POLL_MS);
  const [answered, setAnswered] = useState<{ id: string; text: string; runId: string }[]>([]);
  const done = new Set(answered.map((a) => a.id));
  const items = ((data?.approvals ?? []) as InboxItem[]).filter((item) => !done.has(item.call_id));
  const onAnswered = (item: InboxItem, text: string): void => {
    setAnswered((list) => [{ id: item.call_id, text, runId: item.run_id }, ...list].slice(0, 20));
    reload();
  };
  return (
    <section aria-labelledby="inbox-title">
      <h1 id="inbox-title">Inbox</h1>
      <p class="hint">
        Tool calls waiting for approval, questions of human steps and runs paused at their budget.
        The list refreshes every {POLL_MS / 1000} s.
        {data !== undefined && data.provider !== 'http'
          ? ` Tool calls are decided by the ${data.provider} approval provider (AGENTIC_APPROVAL_PROVIDER), so only questions and budgets appear here.`
          : ''}
      </p>
      <ErrorNote error={error} />
      <div aria-live="polite">
        {answered.map((a) => (
          <p key={a.id} class="panel">
            {a.text} <a href={href('runs', a.runId)}>Run {a.runId}</a>
          </p>
        ))}
      </div>
      {loading && data === undefined ? <p aria-live="polite">Loading…</p> : null}
      {data !== undefined && items.length === 0 ? <p>Nothing waits for a person.</p> : null}
      <ul class="stack" aria-label="Waiting requests" style="list-style:none;padding:0">
        {items.map((item) => (
          <li key={item.call_id}>
            <InboxEntry item={item} onAnswered={(text) => onAnswered(item, text)} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function InboxEntry({ item, onAnswered }: { item: InboxItem; onAnswered: (text: string) => void }) {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Error | undefined>(undefined);
  const send = async (body: unknown, text: string): Promise<void> => {
    setBusy(true);
    setFailure(undefined);
    try {
      await api.post(`/api/approvals/${seg(item.call_id)}`, body);
      onAnswered(text);
    } catch (error) {
      setFailure(error instanceof Error ? error : new Error(String(error)));
      setBusy(false);
    }
  };
  const kindLabel =
    item.kind === 'input' ? 'Question' : item.kind === 'budget' ? 'Budget reached' : 'Tool call';
  const titleId = `inbox-${item.call_id}`;
  return (
    <article class="panel inbox-item" aria-labelledby={titleId}>
      <h2 id={titleId}>
        {kindLabel}: {item.kind === undefined ? item.tool_name : item.step}
      </h2>
      <Facts
        rows={[
          ['Run', <a href={href('runs', item.run_id)}>{item.run_id}</a>],
          ['Workflow', item.workflow],
          ['Step', item.step],
          ['Waiting since', formatTime(item.requested_at)],
          ['Expires', formatTime(item.expires_at)],
        ]}
      />
      {item.kind === 'input' ? (
        <>
          {item.prompt === undefined ? null : <p class="prompt">{item.prompt}</p>}
          <SchemaAnswerForm
            schema={item.schema ?? {}}
            idPrefix={`answer-${item.call_id}`}
            submitLabel="Send answer"
            busy={busy}
            onSubmit={(answer) => void send({ answer }, `Answered ${item.step}.`)}
          />
        </>
      ) : item.kind === 'budget' ? (
        <BudgetForm item={item} busy={busy} send={send} />
      ) : (
        <ToolCallForm item={item} busy={busy} send={send} />
      )}
      {failure === undefined ? null : (
        <p class="error" role="alert">
          {failure instanceof ApiError && failure.status === 422 ? 'Not accepted: ' : ''}
          {failure instanceof ApiError ? `${failure.status}: ` : ''}
          {failure.message}
        </p>
      )}
    </article>
  );
}

interface FormProps {
  item: InboxItem;
  busy: boolean;
  send: (body: unknown, text: string) => Promise<void>;
}

function ToolCallForm({ item, busy, send }: FormProps) {
  const [reason, setReason] = useState('');
  const id = `reason-${item.call_id}`;
  const withReason = (decision: 'approve' | 'deny') =>
    reason.trim() === '' ? { decision } : { decision, reason: reason.trim() };
  return (
    <>
      {item.arguments === undefined ? (
        <p class="hint">The arguments are not shown (AGENTIC_APPROVAL_SHOW_ARGUMENTS).</p>
      ) : (
        <JsonBlock value={item.arguments} label={`Arguments of ${item.tool_name}`} />
      )}
      <label for={id}>Reason (optional)</label>
      <input id={id} type="text" value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      <div class="row" style="margin-top:0.6rem">
        <button
          type="button"
          disabled={busy}
          onClick={() => void send(withReason('approve'), `Approved ${item.tool_name}.`)}
        >
          Approve
        </button>
        <button
          type="button"
          class="danger"
          disabled={busy}
          onClick={() => void send(withReason('deny'), `Denied ${item.tool_name}.`)}
        >
          Deny
        </button>
      </div>
    </>
  );
}

function BudgetForm({ item, busy, send }: FormProps) {
  const [cost, setCost] = useState('');
  const [tokens, setTokens] = useState('');
  const costId = `budget-cost-${item.call_id}`;
  const tokensId = `budget-tokens-${item.call_id}`;
  return (
    <>
      <Facts
        rows={[
          ['Tokens spent', item.spent?.tokens],
          ['Cost spent (USD)', item.spent?.cost_usd ?? undefined],
          ['Token limit', item.budget?.max_tokens],
          ['Cost limit (USD)', item.budget?.max_cost_usd],
        ]}
      />
      <form
        onSubmit={(event) => {
          event.preventDefault();
          const budget: Record<string, number> = {};
          if (cost.trim() !== '') budget.max_cost_usd = Number(cost);
          if (tokens.trim() !== '') budget.max_tokens = Number(tokens);
          void send({ budget }, `Raised the budget of ${item.run_id}.`);
        }}
      >
        <label for={costId}>New cost limit (USD)</label>
        <input
          id={costId}
          type="number"
          step="any"
          min="0"
          value={cost}
          onInput={(e) => setCost(e.currentTarget.value)}
        />
        <label for={tokensId}>New token limit</label>
        <input
          id={tokensId}
          type="number"
          step="1"
          min="1"
          value={tokens}
          onInput={(e) => setTokens(e.currentTarget.value)}
        />
        <div class="row" style="margin-top:0.6rem">
          <button type="submit" disabled={busy}>
            Raise budget
          </button>
          <button
            type="button"
            class="danger"
            disabled={busy}
            onClick={() => void send({ decision: 'deny' }, `Stopped run ${item.run_id}.`)}
          >
            Stop run
          </button>
        </div>
      </form>
    </>
  );
}

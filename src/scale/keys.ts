/**
 * The Redis key layout of a deployment, every key under `AGENTIC_REDIS_PREFIX` so several
 * deployments can share one Redis. One place, so docs/scale-out.md and the code agree.
 */

/** Notifications kept in the run-record stream (approximate trim: `MAXLEN ~`). */
export const RECORD_STREAM_MAXLEN = 10_000;
/** Events kept per run stream (the spec's replay buffer of 500 events, exact trim). */
export const RUN_STREAM_MAXLEN = 500;
/**
 * How long the stream of a run still running lives after its last event: a stream whose owner
 * died without a `workflow_end` does not stay in Redis forever.
 */
export const ACTIVE_STREAM_TTL_MS = 24 * 60 * 60 * 1000;

export interface ScaleKeys {
  /** `<prefix>:run:<run_id>:events`: the run's event stream. */
  runEvents(runId: string): string;
  /** `<prefix>:runs:records`: a notification per run-file write (history indexes follow it). */
  readonly records: string;
  /** `<prefix>:ratelimit:<bucket>:<client>`: a sliding window (sorted set of hit times). */
  rateLimit(bucket: string, client: string): string;
  /** `<prefix>:lockout:<client>`: failed authentications of a client (sorted set). */
  lockout(client: string): string;
  /** `<prefix>:breakers`: the last transition of each model's circuit (hash: model → JSON). */
  readonly breakers: string;
  /** `<prefix>:breakers:changes`: the pub/sub channel of circuit transitions. */
  readonly breakerChanges: string;
  /** `<prefix>:claim:<run_id>`: an active run's claim (hash, run-claims.ts). */
  claim(runId: string): string;
  /** `<prefix>:claims:active`: the ids of the claimed runs (set). */
  readonly claimsActive: string;
  /** `<prefix>:claims:changes`: pub/sub channel, a run claimed or released. */
  readonly claimsChanges: string;
  /** `<prefix>:claims:cancel`: pub/sub channel, cancel requests for the workers. */
  readonly claimsCancel: string;
  /**
   * `<prefix>:approvals:pending:<worker>`: the tool calls waiting for approval on one worker
   * (hash: call id → entry), expiring unless the living worker renews it (shared-approvals.ts).
   */
  approvalsPending(workerId: string): string;
  /** `<prefix>:approvals:workers`: the ids of the workers that have calls waiting (set). */
  readonly approvalsWorkers: string;
  /** `<prefix>:approval:decided:<call_id>`: a call decided (expires after an hour). */
  approvalDecided(callId: string): string;
  /** `<prefix>:approvals:answers`: pub/sub channel, answers for the worker holding the call. */
  readonly approvalsAnswers: string;
  /** `<prefix>:approvals:reply:<instance>`: pub/sub channel, the outcome of an answer. */
  approvalsReply(instanceId: string): string;
}

/**
 * The run queue's BullMQ name: its keys are `<prefix>:queue:*` (jobs `<prefix>:queue:<run_id>`),
 * apart from every key above.
 */
export const RUN_QUEUE = 'queue';

export function createScaleKeys(prefix: string): ScaleKeys {
  return {
    runEvents: (runId) => `${prefix}:run:${runId}:events`,
    records: `${prefix}:runs:records`,
    rateLimit: (bucket, client) => `${prefix}:ratelimit:${bucket}:${client}`,
    lockout: (client) => `${prefix}:lockout:${client}`,
    breakers: `${prefix}:breakers`,
    breakerChanges: `${prefix}:breakers:changes`,
    claim: (runId) => `${prefix}:claim:${runId}`,
    claimsActive: `${prefix}:claims:active`,
    claimsChanges: `${prefix}:claims:changes`,
    claimsCancel: `${prefix}:claims:cancel`,
    approvalsPending: (workerId) => `${prefix}:approvals:pending:${workerId}`,
    approvalsWorkers: `${prefix}:approvals:workers`,
    approvalDecided: (callId) => `${prefix}:approval:decided:${callId}`,
    approvalsAnswers: `${prefix}:approvals:answers`,
    approvalsReply: (instanceId) => `${prefix}:approvals:reply:${instanceId}`,
  };
}

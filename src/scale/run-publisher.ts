/**
 * The publishing half of the shared replay store: every wire event of the runs this process
 * executes goes to the run's Redis stream, and every run-file write to the record stream the
 * other instances' history indexes follow (history-feed.ts).
 *
 * Ordering: commands go through an ordered sender (ordered-sender.ts), one pipeline at a time,
 * so a run's stream is in `seq` order. While Redis is away they are kept (bounded) and sent when
 * it is back, so clients following the stream on other instances see no gap; the run itself
 * goes on regardless and its run file is complete.
 */
import type { Redis } from 'ioredis';
import type { WorkflowEvent } from '../generated/events.js';
import type { RunRecord } from '../generated/run-record.js';
import type { Logger } from '../log.js';
import type { Runtime } from '../engine/types.js';
import { endsStream, evaluationRequested } from '../events/evaluation.js';
import {
  ACTIVE_STREAM_TTL_MS,
  RECORD_STREAM_MAXLEN,
  RUN_STREAM_MAXLEN,
  type ScaleKeys,
} from './keys.js';
import { createOrderedSender, type OrderedSender } from './ordered-sender.js';
import { encodeStreamEntry } from './stream-entry.js';

export interface RunPublisherDeps {
  /** A command (non-blocking) connection from `openRedis`. */
  redis: Redis;
  keys: ScaleKeys;
  /** How long a run's stream lives after the run ends (`AGENTIC_EVENT_STREAM_TTL_SECONDS`). */
  streamTtlMs: number;
  /** This process's id in record notifications, so its own history index skips them. */
  instanceId: string;
  logger: Logger;
  /**
   * The ordered sender the commands go through (the service's, so its shutdown can wait for it
   * to drain). @default one of its own
   */
  sender?: OrderedSender;
  /**
   * Events that do not come from the runtime but belong to a run's stream (the evaluation
   * events the hub sequences: `EventHub.onPublish`). @default none
   */
  extraEvents?: (listener: (event: WorkflowEvent) => void) => () => void;
}

/** Fields of a record notification on the record stream. */
export const RECORD_FIELDS = { instance: 'i', filename: 'f', runId: 'r', status: 's' } as const;

interface RunState {
  expectEvaluation: boolean;
  ended: boolean;
}

/**
 * Attaches a publisher to `runtime`: subscribes to its wire events (and `deps.extraEvents`) and
 * to its run-file writes (`onRecord`) and pushes them to Redis:
 *
 * - each event: `XADD <prefix>:run:<run_id>:events MAXLEN 500 * e <json> [l 1]`, then `PEXPIRE`
 *   24 h while the run is active and `deps.streamTtlMs` once `workflow_end` was published; a
 *   `workflow_start` with seq 0 first deletes the key (a finished run's id reused);
 * - each record write: `XADD <prefix>:runs:records MAXLEN ~ 10000 * i <instance> f <filename>
 *   r <run_id> s <status>`.
 *
 * Never throws and never rejects: while Redis is away the commands wait in the sender (at most
 * 20 000, the oldest dropped beyond), logged once per outage. Returns the detach function
 * (idempotent): nothing more is published; commands already queued still go out.
 *
 * @param runtime the runtime whose runs are published (`subscribe` and `onRecord` are used)
 * @param deps the Redis connection, key layout, stream TTL, instance id and logger
 */
export function attachRunPublisher(
  runtime: Pick<Runtime, 'subscribe' | 'onRecord'>,
  deps: RunPublisherDeps,
): () => void {
  const { redis, keys, logger } = deps;
  const runs = new Map<string, RunState>();
  let detached = false;
  const sender = deps.sender ?? createOrderedSender(redis, logger);

  const stateOf = (runId: string): RunState => {
    let state = runs.get(runId);
    if (state === undefined) runs.set(runId, (state = { expectEvaluation: false, ended: false }));
    return state;
  };

  const onEvent = (event: WorkflowEvent): void => {
    if (detached) return;
    const key = keys.runEvents(event.run_id);
    // A finished run's id reused: start over (the running record may have come first and said
    // whether evaluation follows, so an unfinished state is kept).
    if (event.type === 'workflow_start' && event.seq === 0 && runs.get(event.run_id)?.ended) {
      runs.delete(event.run_id);
    }
    const state = stateOf(event.run_id);
    if (event.type === 'evaluation_start') state.expectEvaluation = true;
    if (event.type === 'workflow_end') state.ended = true;
    // Evaluation events come after workflow_end, possibly after this process forgot the run.
    if (event.type === 'evaluation_start' || event.type === 'evaluation_complete') {
      state.ended = true;
    }
    const last = endsStream(event, state.expectEvaluation);
    if (last) runs.delete(event.run_id);
    const fields = encodeStreamEntry(event, last);
    const ttlMs = state.ended ? deps.streamTtlMs : ACTIVE_STREAM_TTL_MS;
    const restart = event.type === 'workflow_start' && event.seq === 0;
    sender.send((pipeline) => {
      if (restart) pipeline.del(key);
      pipeline.xadd(key, 'MAXLEN', RUN_STREAM_MAXLEN, '*', ...fields);
      pipeline.pexpire(key, ttlMs);
    });
  };

  const onRecord = (record: RunRecord, filename: string): void => {
    if (detached) return;
    // The running record is written before the run's first event is sent: whether the stream
    // ends at workflow_end is known in time.
    if (record.status === 'running' && evaluationRequested(record)) {
      stateOf(record.run_id).expectEvaluation = true;
    }
    const { run_id: runId, status } = record;
    sender.send((pipeline) => {
      pipeline.xadd(
        keys.records,
        'MAXLEN',
        '~',
        RECORD_STREAM_MAXLEN,
        '*',
        RECORD_FIELDS.instance,
        deps.instanceId,
        RECORD_FIELDS.filename,
        filename,
        RECORD_FIELDS.runId,
        runId,
        RECORD_FIELDS.status,
        status,
      );
    });
  };

  const offEvents = runtime.subscribe(onEvent);
  const offRecords = runtime.onRecord(onRecord);
  const offExtra = deps.extraEvents?.(onEvent);
  return () => {
    if (detached) return;
    detached = true;
    offEvents();
    offRecords();
    offExtra?.();
    runs.clear();
  };
}

/**
 * Tool-call approvals across a deployment (README "Approval", provider `http`): a call waits in
 * the runtime of the worker executing its run, while `GET/POST /api/approvals` reach any api
 * instance. Each worker mirrors its waiting calls into a Redis hash (from its runs'
 * `approval_required` / `approval_decision` events) and takes answers from a pub/sub channel:
 * the worker holding the call answers it and replies on the asking instance's reply channel
 * with the outcome (`decided`, `already_decided`). An api instance lists the hash and sends
 * answers; a call no worker holds is `already_decided` when it was decided within the hour,
 * else `unknown` (404).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RuntimeApprovals } from '../engine/runtime-approvals.js';
import type { RunServiceApprovals, Runtime } from '../engine/types.js';
import { DependencyError, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import type { ApprovalAnswer, PendingApproval } from '../tools/index.js';
import type { ScaleKeys } from './keys.js';
import { unsubscribeQuietly } from './quiet-close.js';

/** 503: the calls of other processes cannot be reached while Redis is away. */
function redisAway(cause: unknown): DependencyError {
  return new DependencyError(
    'Redis is unavailable: approvals of runs on other instances cannot be reached until it is back',
    cause,
  );
}

/** How long an api instance waits for the holding worker's reply. */
const REPLY_TIMEOUT_MS = 5_000;
/** How long a decided call is remembered (its answer is then a 409, not a 404). */
const DECIDED_TTL_SECONDS = 3_600;

interface AnswerMessage {
  callId: string;
  approve: boolean;
  reason?: string;
  replyTo: string;
  request: string;
}

interface ReplyMessage {
  request: string;
  outcome: ApprovalAnswer;
}

export interface ApprovalSharingOptions {
  runtime: Pick<Runtime, 'subscribe' | 'approvals'>;
  /** A command connection. */
  redis: Redis;
  /** A connection for the answers channel (subscriber mode). */
  subscriber: Redis;
  keys: ScaleKeys;
  logger: Logger;
}

/** Worker side: mirrors the runtime's waiting calls and answers them. Returns the stop function. */
export function shareApprovals(options: ApprovalSharingOptions): () => Promise<void> {
  const { runtime, redis, subscriber, keys, logger } = options;
  const { approvals } = runtime;
  const warn = (what: string) => (error: unknown) =>
    logger.warn({ err: errorMessage(error) }, `approval ${what} not shared through Redis`);
  const offEvents = runtime.subscribe((event) => {
    if (event.type === 'approval_required') {
      const entry = approvals.pending().find((p) => p.callId === event.call_id);
      if (entry === undefined) return;
      redis.hset(keys.approvalsPending, entry.callId, JSON.stringify(entry)).catch(warn('request'));
    } else if (event.type === 'approval_decision') {
      redis
        .multi()
        .hdel(keys.approvalsPending, event.call_id)
        .set(keys.approvalDecided(event.call_id), '1', 'EX', DECIDED_TTL_SECONDS)
        .exec()
        .catch(warn('decision'));
    }
  });
  const onMessage = (channel: string, message: string): void => {
    if (channel !== keys.approvalsAnswers) return;
    let answer: AnswerMessage;
    try {
      answer = JSON.parse(message) as AnswerMessage;
    } catch {
      return; // not ours
    }
    // Only the worker holding the call answers; the others stay silent.
    if (!approvals.pending().some((p) => p.callId === answer.callId)) return;
    const outcome = approvals.answer(answer.callId, answer.approve, answer.reason);
    const reply: ReplyMessage = { request: answer.request, outcome };
    redis.publish(answer.replyTo, JSON.stringify(reply)).catch(warn('answer'));
  };
  subscriber.on('message', onMessage);
  const subscribed = subscriber.subscribe(keys.approvalsAnswers).catch(warn('channel'));
  return async () => {
    offEvents();
    subscriber.off('message', onMessage);
    await unsubscribeQuietly(subscriber, keys.approvalsAnswers, subscribed);
  };
}

export interface SharedApprovalsOptions {
  /** The provider's name and whether arguments are shown (as configured for the workers). */
  provider: string;
  showArguments: boolean;
  /**
   * The approvals of this process's own worker (role `all`): its calls are listed and answered
   * here directly, without Redis (so they can be answered while Redis is away). @default none
   */
  local?: RuntimeApprovals;
  redis: Redis;
  /** A connection for this instance's reply channel (subscriber mode). */
  subscriber: Redis;
  keys: ScaleKeys;
  logger: Logger;
}

/** Api side: the deployment's waiting calls, answered through their worker. */
export function createSharedApprovals(
  options: SharedApprovalsOptions,
): RunServiceApprovals & { close(): Promise<void> } {
  const { redis, subscriber, keys, local } = options;
  const replyTo = keys.approvalsReply(randomUUID());
  const waiting = new Map<string, (outcome: ApprovalAnswer | undefined) => void>();
  const onMessage = (channel: string, message: string): void => {
    if (channel !== replyTo) return;
    try {
      const reply = JSON.parse(message) as ReplyMessage;
      waiting.get(reply.request)?.(reply.outcome);
    } catch {
      // not ours
    }
  };
  subscriber.on('message', onMessage);
  const subscribed = subscriber.subscribe(replyTo).catch((error: unknown) => {
    options.logger.error({ err: errorMessage(error) }, 'cannot subscribe to approval replies');
  });

  async function held(callId: string): Promise<boolean> {
    return (await redis.hexists(keys.approvalsPending, callId)) === 1;
  }

  return {
    provider: options.provider,
    showArguments: options.showArguments,
    async pending() {
      const now = Date.now();
      const entries: PendingApproval[] = [...(local?.pending() ?? [])];
      const seen = new Set(entries.map((entry) => entry.callId));
      let shared: string[];
      try {
        shared = await redis.hvals(keys.approvalsPending);
      } catch (error) {
        if (local === undefined) throw redisAway(error);
        shared = []; // Redis away: this process's own calls are still listed
      }
      for (const text of shared) {
        try {
          const entry = JSON.parse(text) as PendingApproval;
          // A worker that died leaves its entries: past their expiry they are gone for good.
          if (entry.expiresAt > now && !seen.has(entry.callId)) entries.push(entry);
        } catch {
          // not ours
        }
      }
      return entries.sort((x, y) => x.requestedAt - y.requestedAt);
    },
    async answer(callId, approve, reason) {
      if (local?.pending().some((entry) => entry.callId === callId) === true) {
        return local.answer(callId, approve, reason);
      }
      await subscribed;
      try {
        if (!(await held(callId))) {
          return (await redis.exists(keys.approvalDecided(callId))) === 1
            ? 'already_decided'
            : 'unknown';
        }
      } catch (error) {
        throw redisAway(error);
      }
      const request = randomUUID();
      const outcome = await new Promise<ApprovalAnswer | undefined>((resolve) => {
        const timer = setTimeout(() => settle(undefined), REPLY_TIMEOUT_MS);
        function settle(value: ApprovalAnswer | undefined): void {
          clearTimeout(timer);
          waiting.delete(request);
          resolve(value);
        }
        waiting.set(request, settle);
        const message: AnswerMessage = {
          callId,
          approve,
          ...(reason === undefined ? {} : { reason }),
          replyTo,
          request,
        };
        redis
          .publish(keys.approvalsAnswers, JSON.stringify(message))
          .catch(() => settle(undefined));
      });
      // No reply: no live worker holds the call (its worker died; the run ends interrupted).
      return outcome ?? 'unknown';
    },
    async close() {
      for (const settle of [...waiting.values()]) settle(undefined);
      subscriber.off('message', onMessage);
      await unsubscribeQuietly(subscriber, replyTo, subscribed);
    },
  };
}

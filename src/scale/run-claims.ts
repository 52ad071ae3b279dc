/**
 * Run claims: which runs are active across the deployment, held in Redis so every api instance
 * and worker agrees. A run is claimed (atomically, once) by the api instance that accepts it,
 * before it is queued: a second claim of the same `run_id` anywhere fails, which is the 409.
 * The claim lives until the run has ended (its end record written), when whoever ended it
 * releases it; the release is atomic too, and only one releaser gets `true`, which makes the
 * end of a run a once-only step across processes (see run-finaliser.ts).
 *
 * Keys (keys.ts), under the deployment's prefix: `<prefix>:claim:<id>` (a hash: state, time, worker, run file, a cancel request) and
 * `<prefix>:claims:active` (the set of claimed ids). Two pub/sub channels:
 * `<prefix>:claims:changes` (a run claimed or released, with its run file) for the api
 * instances' views of active runs and for waiters on a run's end, and `<prefix>:claims:cancel`
 * for cancel requests, which reach the worker running the run.
 */
import type { Redis } from 'ioredis';
import type { ScaleKeys } from './keys.js';

/** A change of the set of active runs, as published on the changes channel. */
export interface ClaimChange {
  runId: string;
  active: boolean;
  /** The run file's name (releases of runs that wrote one). */
  filename?: string;
}

/** A cancel request, as published on the cancel channel. */
export interface CancelRequest {
  runId: string;
  reason: string;
}

/** What a claim holds. */
export interface ClaimInfo {
  state: 'queued' | 'running';
  /** The worker's owner id (store/owner.ts) once it runs the run. */
  owner: string | undefined;
  /** The run file's name once its start record is written. */
  filename: string | undefined;
  /** A cancel request's reason, when one was made. */
  cancel: string | undefined;
  /** The owner id of the process executing the run (its start record's, or its taker's). */
  runner: string | undefined;
}

export interface RunClaims {
  readonly changesChannel: string;
  readonly cancelChannel: string;
  /** Claims `runId`; false when it is claimed already (an active run, anywhere). */
  claim(runId: string): Promise<boolean>;
  /** The claim of an active run, or undefined. */
  get(runId: string): Promise<ClaimInfo | undefined>;
  /** A worker takes the run: false when the claim is gone (the run was released meanwhile). */
  markRunning(runId: string, owner: string): Promise<boolean>;
  /** The run goes back to the queue unstarted (a worker shutting down handed it back). */
  markQueued(runId: string): Promise<void>;
  /**
   * Records the run file's name (the finaliser of a dead worker's run needs it) and the owner id
   * its start record names (`runner`: the process the run executes in, see {@link takeOver}).
   */
  setFile(runId: string, filename: string, runner?: string): Promise<void>;
  /**
   * The run's owner `from` is gone: `to` takes it over. Atomic, so exactly one of the processes
   * racing for the run gets true: the claim must exist and name `from` as its runner (or none
   * yet); it then names `to`, and `takeovers` counts one more.
   */
  takeOver(runId: string, from: string | undefined, to: string): Promise<boolean>;
  /** Gives a run taken over back (its resume failed here): names `from` again if it names `to`. */
  giveBack(runId: string, from: string | undefined, to: string): Promise<void>;
  /** Releases the claim if it still names `runner` (or no runner); true when it did. */
  releaseHeld(
    runId: string,
    filename: string | undefined,
    runner: string | undefined,
  ): Promise<boolean>;
  /** Records and publishes a cancel request; false when the run is not active. */
  requestCancel(runId: string, reason: string): Promise<boolean>;
  /** Releases the claim; true only for the one caller that released it. */
  release(runId: string, filename: string | undefined): Promise<boolean>;
  /** Releases the claim only while no worker has taken the run; true when it did. */
  releaseQueued(runId: string): Promise<boolean>;
  /** Every claimed run id. */
  active(): Promise<string[]>;
}

// Each script is one atomic step: Redis runs a script with nothing in between.
const CLAIM = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'state', 'queued', 'at', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('PUBLISH', KEYS[3], ARGV[3])
return 1`;
const MARK_RUNNING = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'state', 'running', 'owner', ARGV[1])
return 1`;
const MARK_QUEUED = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'state', 'queued')
redis.call('HDEL', KEYS[1], 'owner', 'file', 'runner')
return 1`;
const SET_FILE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'file', ARGV[1])
if ARGV[2] ~= '' and not redis.call('HGET', KEYS[1], 'runner') then
  redis.call('HSET', KEYS[1], 'runner', ARGV[2])
end
return 1`;
const TAKE_OVER = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local runner = redis.call('HGET', KEYS[1], 'runner')
if runner and runner ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'runner', ARGV[2], 'state', 'running')
redis.call('HINCRBY', KEYS[1], 'takeovers', 1)
return 1`;
const GIVE_BACK = `
if redis.call('HGET', KEYS[1], 'runner') ~= ARGV[2] then return 0 end
if ARGV[1] == '' then redis.call('HDEL', KEYS[1], 'runner')
else redis.call('HSET', KEYS[1], 'runner', ARGV[1]) end
return 1`;
const RELEASE_HELD = `
local runner = redis.call('HGET', KEYS[1], 'runner')
if runner and runner ~= ARGV[3] then return 0 end
local released = redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
if released == 1 then redis.call('PUBLISH', KEYS[3], ARGV[2]) end
return released`;
const REQUEST_CANCEL = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'cancel', ARGV[1])
redis.call('PUBLISH', KEYS[2], ARGV[2])
return 1`;
const RELEASE_QUEUED = `
if redis.call('HGET', KEYS[1], 'state') ~= 'queued' then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('PUBLISH', KEYS[3], ARGV[2])
return 1`;
const RELEASE = `
local released = redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
if released == 1 then redis.call('PUBLISH', KEYS[3], ARGV[2]) end
return released`;

/** The claims of a deployment (its `keys`), through a command connection. */
export function createRunClaims(redis: Redis, keys: ScaleKeys): RunClaims {
  const key = (runId: string): string => keys.claim(runId);
  const activeKey = keys.claimsActive;
  const changesChannel = keys.claimsChanges;
  const cancelChannel = keys.claimsCancel;
  const change = (value: ClaimChange): string => JSON.stringify(value);

  return {
    changesChannel,
    cancelChannel,
    async claim(runId) {
      const claimed = await redis.eval(
        CLAIM,
        3,
        key(runId),
        activeKey,
        changesChannel,
        runId,
        String(Date.now()),
        change({ runId, active: true }),
      );
      return claimed === 1;
    },
    async get(runId) {
      const fields = await redis.hgetall(key(runId));
      if (fields.state === undefined) return undefined;
      return {
        state: fields.state === 'running' ? 'running' : 'queued',
        owner: fields.owner,
        filename: fields.file,
        cancel: fields.cancel,
        runner: fields.runner,
      };
    },
    async markRunning(runId, owner) {
      return (await redis.eval(MARK_RUNNING, 1, key(runId), owner)) === 1;
    },
    async markQueued(runId) {
      await redis.eval(MARK_QUEUED, 1, key(runId));
    },
    async setFile(runId, filename, runner) {
      await redis.eval(SET_FILE, 1, key(runId), filename, runner ?? '');
    },
    async takeOver(runId, from, to) {
      return (await redis.eval(TAKE_OVER, 1, key(runId), from ?? '', to)) === 1;
    },
    async giveBack(runId, from, to) {
      await redis.eval(GIVE_BACK, 1, key(runId), from ?? '', to);
    },
    async releaseHeld(runId, filename, runner) {
      const released = await redis.eval(
        RELEASE_HELD,
        3,
        key(runId),
        activeKey,
        changesChannel,
        runId,
        change({ runId, active: false, ...(filename === undefined ? {} : { filename }) }),
        runner ?? '',
      );
      return released === 1;
    },
    async requestCancel(runId, reason) {
      const request: CancelRequest = { runId, reason };
      const found = await redis.eval(
        REQUEST_CANCEL,
        2,
        key(runId),
        cancelChannel,
        reason,
        JSON.stringify(request),
      );
      return found === 1;
    },
    async release(runId, filename) {
      const released = await redis.eval(
        RELEASE,
        3,
        key(runId),
        activeKey,
        changesChannel,
        runId,
        change({ runId, active: false, ...(filename === undefined ? {} : { filename }) }),
      );
      return released === 1;
    },
    async releaseQueued(runId) {
      const released = await redis.eval(
        RELEASE_QUEUED,
        3,
        key(runId),
        activeKey,
        changesChannel,
        runId,
        change({ runId, active: false }),
      );
      return released === 1;
    },
    active: () => redis.smembers(activeKey),
  };
}

/** Parses a message of the changes channel; undefined for anything malformed. */
export function parseClaimChange(message: string): ClaimChange | undefined {
  try {
    const value = JSON.parse(message) as Partial<ClaimChange>;
    if (typeof value.runId !== 'string' || typeof value.active !== 'boolean') return undefined;
    return {
      runId: value.runId,
      active: value.active,
      ...(typeof value.filename === 'string' ? { filename: value.filename } : {}),
    };
  } catch {
    return undefined; // not ours: another deployment's tool on the same channel name
  }
}

/** Parses a message of the cancel channel; undefined for anything malformed. */
export function parseCancelRequest(message: string): CancelRequest | undefined {
  try {
    const value = JSON.parse(message) as Partial<CancelRequest>;
    if (typeof value.runId !== 'string' || typeof value.reason !== 'string') return undefined;
    return { runId: value.runId, reason: value.reason };
  } catch {
    return undefined; // not ours: another deployment's tool on the same channel name
  }
}

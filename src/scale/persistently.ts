/**
 * Retrying a Redis write that must happen (a claim's release) until Redis answers: what a
 * process owes the deployment after an outage is done once it is back, not dropped.
 */
import { setTimeout as delay } from 'node:timers/promises';

/** Retry pauses while Redis does not answer, in ms: doubling from the first to the last. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 2_000;

/**
 * Calls `attempt` until it resolves or `signal` aborts (a shutdown: then the claim is left to
 * a finaliser or the next start-up scan). `failed` hears the first failure only.
 */
export async function persistently(
  attempt: () => Promise<unknown>,
  signal: AbortSignal,
  failed: (error: unknown) => void,
): Promise<void> {
  let pauseMs = RETRY_FIRST_MS;
  for (let tries = 0; !signal.aborted; tries += 1) {
    try {
      await attempt();
      return;
    } catch (error) {
      if (tries === 0) failed(error);
    }
    // Rejects when aborted: the loop then ends.
    await delay(pauseMs, undefined, { signal }).catch(() => undefined);
    pauseMs = Math.min(pauseMs * 2, RETRY_MAX_MS);
  }
}

import type { EngineClock } from '../../machines/engine-contract.js';

/** The real clock: `Date.now` and Node timers. */
export const systemClock: EngineClock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

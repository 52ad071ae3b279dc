/**
 * Serves requests arriving together over event-loop turns (src/engine/turn-slicer.ts).
 *
 * Why: one poll phase can hold dozens of requests (a start burst: every POST /api/run of 200
 * clients), and each runs its middleware, body parsing, sanitizer and validation back to back,
 * 0.2-0.3 ms apiece, before anything else (a timer, a chunk of a running run's stream) gets the
 * thread. Behind this middleware each request waits for its slot of the process's slicer, which
 * gives a turn a few milliseconds of pieces (requests, WebSocket upgrades, run launches and
 * begins: first come, first served) and passes the rest to the next turns. Placed after the
 * request timers (tracing, metrics, access log), so their durations include the wait.
 */
import type { Middleware } from 'koa';
import type { TurnSlicer } from '../../engine/turn-slicer.js';

/** Lets each request go on in its turn slot of `slicer` (at once while the turn has budget). */
export function sliceRequests(slicer: TurnSlicer): Middleware {
  return async (_ctx, next) => {
    const slot = slicer.slot();
    if (slot !== undefined) await slot;
    await next();
  };
}

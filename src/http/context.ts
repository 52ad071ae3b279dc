/**
 * Per-request state shared by the middleware and routes of the Koa app.
 */
import type { Context } from 'koa';
import type { Logger } from '../log.js';

export interface RequestState {
  /** From a well-formed `X-Request-Id` header, or generated. Echoed in the response. */
  requestId: string;
  /** Child logger carrying the request id. */
  log: Logger;
  /** The access record's level when an error chose it (see AppError.logLevel). */
  logLevel?: 'info' | 'warn';
}

/** The parsed JSON body set by the body parser (undefined when the request had none). */
export function requestBody(ctx: Context): unknown {
  return (ctx.request as { body?: unknown }).body;
}

/** The request's logger, or the fallback when the request-context middleware did not run. */
export function requestLog(ctx: Context, fallback: Logger): Logger {
  const state = ctx.state as Partial<RequestState>;
  return state.log ?? fallback;
}

/** A path parameter of the matched route ('' when absent, which no route allows). */
export function param(ctx: { params?: Record<string, string | undefined> }, name: string): string {
  return ctx.params?.[name] ?? '';
}

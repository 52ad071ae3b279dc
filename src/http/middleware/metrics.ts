/**
 * The HTTP side of the metrics (issue 14): request durations by route template, refusals by
 * the guards in front of the routes, and sanitizer findings. Labels never carry a raw path:
 * a request no route matched is counted under {@link UNMATCHED_ROUTE}.
 */
import type { Middleware } from 'koa';
import { AuthError, RateLimitedError } from '../../errors.js';
import type { RefusalReason, ServiceMetrics } from '../../metrics/index.js';
import type { SanitizationState } from './sanitize.js';

/** The route label of a request no route matched (SPA files, 404s, 405s). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Methods counted (and traced) by name; anything else is `OTHER` (the method is client-chosen). */
export const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** A request's method as a bounded label: one of {@link KNOWN_METHODS}, or `OTHER`. */
export function methodLabel(ctx: { method: string }): string {
  return KNOWN_METHODS.has(ctx.method) ? ctx.method : 'OTHER';
}

/** The route template the router matched (never the raw path), or {@link UNMATCHED_ROUTE}. */
export function routeLabel(ctx: object): string {
  const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  return typeof matched === 'string' ? matched : UNMATCHED_ROUTE;
}

/**
 * Times every request; outermost, so the status is the one the error funnel wrote. A
 * streaming response (SSE) is timed until its stream ends: its route returns only then.
 */
export function createHttpMetrics(metrics: ServiceMetrics): Middleware {
  return async (ctx, next) => {
    const start = performance.now();
    let status = 500;
    try {
      await next();
      status = ctx.status;
    } finally {
      metrics.httpDuration.observe(
        { method: methodLabel(ctx), route: routeLabel(ctx), status: String(status) },
        (performance.now() - start) / 1000,
      );
    }
  };
}

/**
 * Wraps a guard (rate limit, API key) so that a request it refuses itself, before calling
 * `next`, is counted: a 429 under `limitedReason`, a 401 under `auth`. Errors from further
 * down (a route's own 429) pass through uncounted.
 */
export function countRefusals(
  metrics: ServiceMetrics,
  guard: Middleware,
  limitedReason: RefusalReason,
): Middleware {
  return async (ctx, next) => {
    let passed = false;
    try {
      await guard(ctx, () => {
        passed = true;
        return next();
      });
    } catch (error) {
      if (!passed) {
        if (error instanceof RateLimitedError) metrics.refusals.inc({ reason: limitedReason });
        else if (error instanceof AuthError) metrics.refusals.inc({ reason: 'auth' });
      }
      throw error;
    }
  };
}

/**
 * Counts the sanitizer's findings of each request body (set before it blocks, so blocked
 * requests count too). Goes in front of the sanitizer.
 */
export function countSanitizerFindings(metrics: ServiceMetrics): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const result = (ctx.state as SanitizationState).sanitization;
      if (result !== undefined) {
        for (const finding of result.findings) {
          metrics.sanitizerFindings.inc({
            category: finding.category,
            classification: result.classification,
          });
        }
      }
    }
  };
}

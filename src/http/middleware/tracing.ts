/**
 * A server span per HTTP request (AGENTIC_TRACING=1). The span continues the caller's trace
 * when the request carries a W3C `traceparent` (and `tracestate`); it is named by method and
 * route template (`POST /api/run`), never by the raw path, which holds run ids and file names.
 * Routes that start a run pass {@link TracingState.traceContext} on, so the run's span is a
 * child of the request's; `POST /api/chat` makes its model calls' spans children of it.
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Tracer,
} from '@opentelemetry/api';
import type { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Context as KoaContext, Middleware } from 'koa';
import type { IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import { methodLabel, routeLabel, UNMATCHED_ROUTE } from './metrics.js';

/** What the tracing middleware leaves in `ctx.state`. */
export interface TracingState {
  /** The request span's context (absent when tracing is off). */
  traceContext?: Context;
}

let propagator: W3CTraceContextPropagator | undefined;

/**
 * The W3C propagator, from @opentelemetry/core required at the first traced request: the app
 * imports this module whether tracing is on or not, and a service without tracing should not
 * load the OpenTelemetry SDK's packages at start-up (issue 25).
 */
function w3cPropagator(): W3CTraceContextPropagator {
  if (propagator === undefined) {
    const require = createRequire(import.meta.url);
    const core = require('@opentelemetry/core') as {
      W3CTraceContextPropagator: typeof W3CTraceContextPropagator;
    };
    propagator = new core.W3CTraceContextPropagator();
  }
  return propagator;
}

/** Reads the propagation headers from Node's lower-cased header object. */
const headerGetter = {
  keys: (carrier: IncomingHttpHeaders) => Object.keys(carrier),
  get: (carrier: IncomingHttpHeaders, key: string) => carrier[key],
};

/**
 * The caller's trace context from a request's W3C `traceparent` (and `tracestate`), or the
 * root context when it carries none or a malformed one.
 */
export function callerContext(headers: IncomingHttpHeaders): Context {
  return w3cPropagator().extract(ROOT_CONTEXT, headers, headerGetter);
}

/** The request's trace context, from the incoming `traceparent` when it is well formed. */
export function traceContextOf(ctx: KoaContext): Context | undefined {
  return (ctx.state as TracingState).traceContext;
}

/**
 * Outermost: the status is the one the error funnel wrote. The streaming routes (SSE) return
 * only when their stream has ended, so a stream's span lasts as long as the stream.
 */
export function createHttpTracing(tracer: Tracer): Middleware {
  return async (ctx, next) => {
    const method = methodLabel(ctx);
    const parent = callerContext(ctx.headers);
    const span = tracer.startSpan(
      method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } },
      parent,
    );
    (ctx.state as TracingState).traceContext = trace.setSpan(parent, span);
    let status = 500;
    try {
      await next();
      status = ctx.status;
    } finally {
      const route = routeLabel(ctx);
      // Semantic conventions: `{method} {route}`, or the method alone when no route matched.
      span.updateName(route === UNMATCHED_ROUTE ? method : `${method} ${route}`);
      if (route !== UNMATCHED_ROUTE) span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}

/**
 * W3C trace context across processes: a run queued on an api instance carries its request
 * span's context as `traceparent`/`tracestate` strings (job data is JSON; an OpenTelemetry
 * `Context` is not), and the worker that executes the run continues the trace from them, so
 * the run span it makes is a child of the request span.
 */
import { ROOT_CONTEXT, type Context } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** A trace context as the W3C headers carry it. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

const propagator = new W3CTraceContextPropagator();

const setter = {
  set: (carrier: Record<string, string>, key: string, value: string) => {
    carrier[key] = value;
  },
};

const getter = {
  keys: (carrier: Partial<TraceCarrier>) => Object.keys(carrier),
  get: (carrier: Partial<TraceCarrier>, key: string) =>
    key === 'traceparent' || key === 'tracestate' ? carrier[key] : undefined,
};

/**
 * The W3C headers of the span in `context`, or undefined when it holds no valid span (nothing
 * to continue: the run span will be a trace root, as without tracing).
 */
export function injectTraceContext(context: Context): TraceCarrier | undefined {
  const carrier: Record<string, string> = {};
  propagator.inject(context, carrier, setter);
  const { traceparent, tracestate } = carrier;
  if (traceparent === undefined) return undefined;
  return tracestate === undefined ? { traceparent } : { traceparent, tracestate };
}

/**
 * The context to continue from `carrier` (a remote parent span), or the root context when the
 * `traceparent` is missing or malformed.
 */
export function extractTraceContext(carrier: Partial<TraceCarrier>): Context {
  return propagator.extract(ROOT_CONTEXT, carrier, getter);
}

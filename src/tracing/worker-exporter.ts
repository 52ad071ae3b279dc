/**
 * A SpanExporter that hands each batch to a worker thread (workers/otlp-export-worker.mjs),
 * which encodes it and sends it with OpenTelemetry's own OTLP exporter.
 *
 * Why: with every span exported, the OTLP protobuf encoding and the collector's HTTP or gRPC
 * connection were about a third of tracing's cost on the service's main thread (CPU profiles
 * of `npm run bench:overhead`), and a full batch (512 spans) encoded in one go held the event
 * loop for several milliseconds. Here the main thread only copies each span's fields into a
 * plain record (structured clone, done by V8 in C++) and the encoding and the network are the
 * worker's. What reaches the collector is unchanged: the same exporter builds it.
 *
 * A worker that dies fails the exports it held (the batch processor drops them, as it does on a
 * collector error) and the next export starts a new one; after {@link MAX_FAILED_STARTS} deaths
 * with no export done in between, exports fail at once with the last error instead of starting
 * workers in a loop. The worker holds the process open only while an answer is awaited, so a
 * graceful shutdown's flush is waited for and an idle service can exit.
 */
import type { SpanContext } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../config/package-info.js';

/** The worker's code: plain JavaScript shipped with the package (worker threads do not get tsx's loader). */
const WORKER_PATH = join(packageRoot, 'workers', 'otlp-export-worker.mjs');

/** Worker deaths in a row (no export answered in between) after which exports fail at once. */
export const MAX_FAILED_STARTS = 3;

export interface WorkerExporterOptions {
  protocol: 'grpc' | 'http/protobuf';
  /** The collector: a gRPC base URL, or the full `/v1/traces` URL over HTTP. */
  url: string;
  /** Longest one export may take in the worker's exporter, retries included (ms). */
  timeoutMillis: number;
  /** Another worker script speaking the same messages (tests). */
  workerPath?: string;
}

/**
 * A span context as it crosses to the worker, the trace state serialized. Records are arrays
 * (read back by position in workers/otlp-export-worker.mjs): V8 clones them about twice as fast
 * as objects, whose every key it writes out.
 */
type ContextRecord = [
  traceId: string,
  spanId: string,
  traceFlags: number,
  traceState: string | null,
  isRemote: boolean | null,
];

/** One finished span as it crosses to the worker (its duration is derived there). */
type SpanRecord = [
  name: string,
  kind: number,
  context: ContextRecord,
  parent: ContextRecord | null,
  startTime: ReadableSpan['startTime'],
  endTime: ReadableSpan['endTime'],
  statusCode: number,
  statusMessage: string | null,
  attributes: ReadableSpan['attributes'],
  events: ReadableSpan['events'] | null,
  links:
    | [context: ContextRecord, attributes: ReadableSpan['attributes'] | null, dropped: number][]
    | null,
  /** Indexes into the batch's resources and scopes: spans sharing them are grouped by them. */
  resource: number,
  scope: number,
  droppedAttributesCount: number,
  droppedEventsCount: number,
  droppedLinksCount: number,
];

/** A request to the worker, without the id {@link WorkerSpanExporter.ask} gives it. */
type Request =
  | {
      type: 'export';
      resources: { attributes: ReadableSpan['attributes']; schemaUrl?: string }[];
      scopes: ReadableSpan['instrumentationScope'][];
      spans: SpanRecord[];
    }
  | { type: 'flush' | 'shutdown' };

interface Reply {
  id: number;
  error?: string;
}

function contextRecord(context: SpanContext): ContextRecord {
  return [
    context.traceId,
    context.spanId,
    context.traceFlags,
    context.traceState?.serialize() ?? null,
    context.isRemote ?? null,
  ];
}

/** Indexes of values by identity, in first-seen order. */
function indexer<T>(): { list: T[]; of: (value: T) => number } {
  const list: T[] = [];
  const index = new Map<T, number>();
  return {
    list,
    of(value) {
      let at = index.get(value);
      if (at === undefined) {
        at = list.push(value) - 1;
        index.set(value, at);
      }
      return at;
    },
  };
}

export class WorkerSpanExporter implements SpanExporter {
  private readonly workerPath: string;
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, (error: Error | undefined) => void>();
  private failedStarts = 0;
  private lastFailure: Error | undefined;
  private stopped = false;

  constructor(private readonly options: WorkerExporterOptions) {
    this.workerPath = options.workerPath ?? WORKER_PATH;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const resources = indexer<ReadableSpan['resource']>();
    const scopes = indexer<ReadableSpan['instrumentationScope']>();
    const records = spans.map((span): SpanRecord => {
      const parent = span.parentSpanContext;
      return [
        span.name,
        span.kind,
        contextRecord(span.spanContext()),
        parent === undefined ? null : contextRecord(parent),
        span.startTime,
        span.endTime,
        span.status.code,
        span.status.message ?? null,
        span.attributes,
        span.events.length === 0 ? null : span.events,
        span.links.length === 0
          ? null
          : span.links.map((link) => [
              contextRecord(link.context),
              link.attributes ?? null,
              link.droppedAttributesCount ?? 0,
            ]),
        resources.of(span.resource),
        scopes.of(span.instrumentationScope),
        span.droppedAttributesCount,
        span.droppedEventsCount,
        span.droppedLinksCount,
      ];
    });
    this.ask(
      {
        type: 'export',
        resources: resources.list.map((resource) => ({
          attributes: resource.attributes,
          ...(resource.schemaUrl === undefined ? {} : { schemaUrl: resource.schemaUrl }),
        })),
        scopes: scopes.list,
        spans: records,
      },
      (error) =>
        resultCallback(
          error === undefined
            ? { code: ExportResultCode.SUCCESS }
            : { code: ExportResultCode.FAILED, error },
        ),
    );
  }

  forceFlush(): Promise<void> {
    if (this.worker === undefined) return Promise.resolve();
    return this.request('flush');
  }

  /** Flushes the worker's exporter, then ends the worker; later exports fail. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const worker = this.worker;
    if (worker === undefined) return;
    try {
      await this.request('shutdown');
    } finally {
      this.worker = undefined;
      await worker.terminate();
    }
  }

  private request(type: 'flush' | 'shutdown'): Promise<void> {
    return new Promise((resolve, reject) => {
      this.ask({ type }, (error) => (error === undefined ? resolve() : reject(error)));
    });
  }

  /** Posts the request under a fresh id; `done` gets its answer (or the reason there is none). */
  private ask(request: Request, done: (error: Error | undefined) => void): void {
    if (this.stopped && request.type === 'export') {
      done(new Error('the trace exporter is shut down'));
      return;
    }
    if (this.worker === undefined && this.failedStarts >= MAX_FAILED_STARTS) {
      done(new Error(`the trace export worker keeps dying: ${this.lastFailure?.message ?? '?'}`));
      return;
    }
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    this.pending.set(id, done);
    // Held open only while an answer is awaited (see the module comment).
    worker.ref();
    try {
      worker.postMessage({ ...request, id });
    } catch (error) {
      // Not cloneable (an attribute value the SDK let through): this batch fails, not the next.
      this.pending.delete(id);
      if (this.pending.size === 0) worker.unref();
      done(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private start(): Worker {
    const worker = new Worker(this.workerPath, {
      workerData: {
        protocol: this.options.protocol,
        url: this.options.url,
        timeoutMillis: this.options.timeoutMillis,
      },
    });
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const done = this.pending.get(reply.id);
      if (done === undefined) return;
      this.pending.delete(reply.id);
      this.failedStarts = 0;
      if (this.pending.size === 0) worker.unref();
      done(reply.error === undefined ? undefined : new Error(reply.error));
    });
    let failure: Error | undefined;
    worker.on('error', (error) => {
      failure = error;
    });
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = undefined;
      const lost = [...this.pending.values()];
      this.pending.clear();
      if (lost.length === 0 && this.stopped) return;
      this.failedStarts++;
      this.lastFailure = failure ?? new Error(`the trace export worker exited with code ${code}`);
      for (const done of lost) done(this.lastFailure);
    });
    return worker;
  }
}

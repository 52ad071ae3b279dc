// Worker thread of src/tracing/worker-exporter.ts: turns the span records it is sent back into
// spans and exports them with OpenTelemetry's own OTLP exporter (HTTP/protobuf or gRPC), so the
// protobuf encoding and the collector's connection cost the service's main thread nothing.
// Plain JavaScript so it runs the same from the TypeScript sources and from dist/.
//
// workerData: {protocol: 'grpc' | 'http/protobuf', url, timeoutMillis}.
// Messages in: {type: 'export', id, resources, scopes, spans} | {type: 'flush' | 'shutdown', id}.
// Replies: {id} on success, {id, error} (a message) on failure.
import { hrTimeDuration, TraceState } from '@opentelemetry/core';
import { parentPort, workerData } from 'node:worker_threads';

const { protocol, url, timeoutMillis } = workerData;
const { OTLPTraceExporter } =
  protocol === 'grpc'
    ? await import('@opentelemetry/exporter-trace-otlp-grpc')
    : await import('@opentelemetry/exporter-trace-otlp-proto');
const exporter = new OTLPTraceExporter({ url, timeoutMillis });

/**
 * A span context as the SDK has it (its trace state an object with `serialize()`), from a
 * record [traceId, spanId, traceFlags, traceState, isRemote] (null: absent).
 */
function spanContext(record) {
  const context = { traceId: record[0], spanId: record[1], traceFlags: record[2] };
  if (record[3] !== null) context.traceState = new TraceState(record[3]);
  if (record[4] !== null) context.isRemote = record[4];
  return context;
}

/**
 * A ReadableSpan of a record (its layout: SpanRecord in src/tracing/worker-exporter.ts);
 * `resources` and `scopes` are shared so that spans group by them.
 */
function readableSpan(record, resources, scopes) {
  const [name, kind, context, parent, startTime, endTime, statusCode, statusMessage] = record;
  const spanContextOfSpan = spanContext(context);
  const status = { code: statusCode };
  if (statusMessage !== null) status.message = statusMessage;
  return {
    name,
    kind,
    spanContext: () => spanContextOfSpan,
    parentSpanContext: parent === null ? undefined : spanContext(parent),
    startTime,
    endTime,
    duration: hrTimeDuration(startTime, endTime),
    ended: true,
    status,
    attributes: record[8],
    events: record[9] ?? [],
    links: (record[10] ?? []).map(([linked, attributes, dropped]) => ({
      context: spanContext(linked),
      ...(attributes === null ? {} : { attributes }),
      droppedAttributesCount: dropped,
    })),
    resource: resources[record[11]],
    instrumentationScope: scopes[record[12]],
    droppedAttributesCount: record[13],
    droppedEventsCount: record[14],
    droppedLinksCount: record[15],
  };
}

function exportBatch(message) {
  return new Promise((resolve, reject) => {
    const spans = message.spans.map((record) =>
      readableSpan(record, message.resources, message.scopes),
    );
    exporter.export(spans, (result) => {
      // ExportResultCode.SUCCESS is 0.
      if (result.code === 0) resolve();
      else reject(result.error ?? new Error('export failed'));
    });
  });
}

function reply(id, task) {
  task.then(
    () => parentPort.postMessage({ id }),
    (error) =>
      parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error) }),
  );
}

parentPort.on('message', (message) => {
  switch (message.type) {
    case 'export':
      reply(message.id, exportBatch(message));
      return;
    case 'flush':
      reply(message.id, exporter.forceFlush());
      return;
    case 'shutdown':
      reply(message.id, exporter.shutdown());
      return;
    default:
      parentPort.postMessage({ id: message.id, error: `unknown message type ${message.type}` });
  }
});

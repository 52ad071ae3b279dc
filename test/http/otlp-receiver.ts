/**
 * A local OTLP trace receiver for tests: an HTTP one (`POST /v1/traces`, protobuf) and a gRPC
 * one (`TraceService/Export`), both on 127.0.0.1, decoding every ExportTraceServiceRequest
 * with protobufjs into flat spans. The message types are the subset of
 * opentelemetry/proto/trace/v1 the assertions read (field numbers from the OTLP protos).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server as GrpcServer, ServerCredentials, status as grpcStatus } from '@grpc/grpc-js';
import protobuf from 'protobufjs';

const field = (type: string, id: number, rule?: 'repeated') => ({
  type,
  id,
  ...(rule ? { rule } : {}),
});

const root = protobuf.Root.fromJSON({
  nested: {
    otlp: {
      nested: {
        ExportTraceServiceRequest: {
          fields: { resourceSpans: field('ResourceSpans', 1, 'repeated') },
        },
        ResourceSpans: {
          fields: {
            resource: field('Resource', 1),
            scopeSpans: field('ScopeSpans', 2, 'repeated'),
          },
        },
        Resource: { fields: { attributes: field('KeyValue', 1, 'repeated') } },
        ScopeSpans: {
          fields: { scope: field('InstrumentationScope', 1), spans: field('Span', 2, 'repeated') },
        },
        InstrumentationScope: { fields: { name: field('string', 1), version: field('string', 2) } },
        Span: {
          fields: {
            traceId: field('bytes', 1),
            spanId: field('bytes', 2),
            parentSpanId: field('bytes', 4),
            name: field('string', 5),
            kind: field('int32', 6),
            startTimeUnixNano: field('fixed64', 7),
            endTimeUnixNano: field('fixed64', 8),
            attributes: field('KeyValue', 9, 'repeated'),
            events: field('Event', 11, 'repeated'),
            status: field('Status', 15),
          },
        },
        Event: {
          fields: { name: field('string', 2), attributes: field('KeyValue', 3, 'repeated') },
        },
        Status: { fields: { message: field('string', 2), code: field('int32', 3) } },
        KeyValue: { fields: { key: field('string', 1), value: field('AnyValue', 2) } },
        AnyValue: {
          oneofs: {
            value: {
              oneof: [
                'stringValue',
                'boolValue',
                'intValue',
                'doubleValue',
                'arrayValue',
                'bytesValue',
              ],
            },
          },
          fields: {
            stringValue: field('string', 1),
            boolValue: field('bool', 2),
            intValue: field('int64', 3),
            doubleValue: field('double', 4),
            arrayValue: field('ArrayValue', 5),
            bytesValue: field('bytes', 7),
          },
        },
        ArrayValue: { fields: { values: field('AnyValue', 1, 'repeated') } },
      },
    },
  },
});
const ExportRequest = root.lookupType('otlp.ExportTraceServiceRequest');

/** One exported span, flattened: ids in hex ('' for a root span's parent). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client. */
  kind: number;
  startNs: number;
  endNs: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  resource: Record<string, unknown>;
  scope: string;
}

interface RawValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number;
  doubleValue?: number;
  arrayValue?: { values?: RawValue[] };
  bytesValue?: Uint8Array;
}
interface RawKeyValue {
  key: string;
  value?: RawValue;
}
interface RawSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId?: Uint8Array;
  name: string;
  kind?: number;
  startTimeUnixNano: number;
  endTimeUnixNano: number;
  attributes?: RawKeyValue[];
  events?: { name: string; attributes?: RawKeyValue[] }[];
  status?: { code?: number; message?: string };
}
interface RawRequest {
  resourceSpans?: {
    resource?: { attributes?: RawKeyValue[] };
    scopeSpans?: { scope?: { name?: string }; spans?: RawSpan[] }[];
  }[];
}

const hex = (bytes: Uint8Array | undefined): string => Buffer.from(bytes ?? []).toString('hex');

function value(raw: RawValue | undefined): unknown {
  if (raw === undefined) return undefined;
  if (raw.arrayValue !== undefined) return (raw.arrayValue.values ?? []).map(value);
  if (raw.bytesValue !== undefined) return hex(raw.bytesValue);
  return raw.stringValue ?? raw.boolValue ?? raw.intValue ?? raw.doubleValue;
}

function attributes(list: RawKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));
}

/** Decodes one ExportTraceServiceRequest body into its spans. */
export function decodeSpans(body: Uint8Array): ReceivedSpan[] {
  const request = ExportRequest.toObject(ExportRequest.decode(body), {
    longs: Number,
    oneofs: false,
  }) as RawRequest;
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributes(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          name: span.name,
          kind: span.kind ?? 0,
          startNs: span.startTimeUnixNano,
          endNs: span.endTimeUnixNano,
          attributes: attributes(span.attributes),
          events: (span.events ?? []).map((event) => ({
            name: event.name,
            attributes: attributes(event.attributes),
          })),
          status: { code: span.status?.code ?? 0, message: span.status?.message ?? '' },
          resource,
          scope: scopeSpans.scope?.name ?? '',
        });
      }
    }
  }
  return spans;
}

export interface OtlpReceiver {
  /** The base URL to give OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** Every span received so far, in arrival order. */
  spans: ReceivedSpan[];
  /** Export requests received. */
  requests: number;
  close(): Promise<void>;
}

/** An OTLP/HTTP receiver (`POST /v1/traces`, `application/x-protobuf`) on 127.0.0.1. */
export async function startHttpReceiver(): Promise<OtlpReceiver> {
  const receiver = { spans: [] as ReceivedSpan[], requests: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      receiver.requests++;
      receiver.spans.push(...decodeSpans(Buffer.concat(chunks)));
      // An empty ExportTraceServiceResponse: everything accepted.
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

/** An OTLP/gRPC receiver (`opentelemetry.proto.collector.trace.v1.TraceService/Export`). */
export async function startGrpcReceiver(): Promise<OtlpReceiver> {
  const receiver = { spans: [] as ReceivedSpan[], requests: 0 };
  const server = new GrpcServer();
  server.addService(
    {
      Export: {
        path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
        requestStream: false,
        responseStream: false,
        requestSerialize: (value: Buffer) => value,
        requestDeserialize: (bytes: Buffer) => bytes,
        responseSerialize: (value: Buffer) => value,
        responseDeserialize: (bytes: Buffer) => bytes,
      },
    },
    {
      Export: (
        call: { request: Buffer },
        callback: (error: { code: number } | null, response?: Buffer) => void,
      ) => {
        try {
          receiver.requests++;
          receiver.spans.push(...decodeSpans(call.request));
          callback(null, Buffer.alloc(0));
        } catch {
          callback({ code: grpcStatus.INVALID_ARGUMENT });
        }
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error === null ? resolve(bound) : reject(error),
    ),
  );
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
      }),
  });
}

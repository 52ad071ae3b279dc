/**
 * Where the service's spans go (OTLP transports and addresses) and the service's name: plain
 * values, apart from ./otlp-provider.ts so that naming them loads no OpenTelemetry SDK.
 */
/** The `service.name` resource of the service's spans. */
export const TRACE_SERVICE_NAME = 'agentic-runtime';

/** OTLP transports (OTEL_EXPORTER_OTLP_PROTOCOL). */
export type OtlpProtocol = 'grpc' | 'http/protobuf';

/** Collector address when OTEL_EXPORTER_OTLP_ENDPOINT is unset (the OTLP defaults). */
export const DEFAULT_OTLP_ENDPOINTS: Readonly<Record<OtlpProtocol, string>> = {
  grpc: 'http://localhost:4317',
  'http/protobuf': 'http://localhost:4318',
};

/**
 * Longest one export may take, retries included, in ms. The SDK's 10 s made a graceful
 * shutdown wait 8 s for a collector that is down (the HTTP exporter retries with backoff).
 */
export const OTLP_EXPORT_TIMEOUT_MS = 3000;

/** Where spans go: a gRPC collector's base URL, or `<base>/v1/traces` over HTTP (OTLP spec). */
export function otlpTracesUrl(protocol: OtlpProtocol, endpoint: string | undefined): string {
  const base = endpoint ?? DEFAULT_OTLP_ENDPOINTS[protocol];
  if (protocol === 'grpc') return base;
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

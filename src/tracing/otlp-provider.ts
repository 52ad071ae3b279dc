/**
 * The service's own TracerProvider (AGENTIC_TRACING=1): spans batched and exported over OTLP,
 * gRPC or HTTP/protobuf, by OpenTelemetry's OTLP exporters running in a worker thread
 * (./worker-exporter.ts). It is never registered as the global provider: the runtime and the
 * HTTP app take their tracer from it explicitly, so an embedding app's own OpenTelemetry set-up
 * is left alone.
 */
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { TraceSamplerSetting } from '../config/index.js';
import { createSampler } from './sampler.js';
import {
  OTLP_EXPORT_TIMEOUT_MS,
  otlpTracesUrl,
  TRACE_SERVICE_NAME,
  type OtlpProtocol,
} from './otlp-endpoint.js';
import { WorkerSpanExporter } from './worker-exporter.js';

export interface OtlpTracingOptions {
  protocol: OtlpProtocol;
  /** Base URL of the collector. @default {@link DEFAULT_OTLP_ENDPOINTS} of the protocol */
  endpoint?: string | undefined;
  /** `service.version`. */
  serviceVersion: string;
  /** Longest wait between batch exports, in ms. @default 5000 (the SDK's) */
  scheduledDelayMs?: number;
  /**
   * Share of traces recorded, 0–1, decided where a trace starts (a request without a sampled
   * `traceparent`, an embedded run); a caller's `traceparent` decides for its own trace.
   * @default 1
   */
  sampleRatio?: number;
  /**
   * The sampler, one of OpenTelemetry's standard OTEL_TRACES_SAMPLER values with its ratio; when
   * given, {@link OtlpTracingOptions.sampleRatio} is not read.
   * @default `parentbased_traceidratio` at `sampleRatio`
   */
  sampler?: Pick<TraceSamplerSetting, 'name' | 'ratio'>;
}

/**
 * A provider exporting to the OTLP collector of `options`, with the service's resources. Its
 * `shutdown()` flushes what is batched (the service calls it on graceful shutdown).
 */
export function createOtlpTracerProvider(options: OtlpTracingOptions): BasicTracerProvider {
  const url = otlpTracesUrl(options.protocol, options.endpoint);
  const exporter = new WorkerSpanExporter({
    protocol: options.protocol,
    url,
    timeoutMillis: OTLP_EXPORT_TIMEOUT_MS,
  });
  return new BasicTracerProvider({
    // Explicit, so the SDK's OTEL_TRACES_SAMPLER is not read behind the config's back.
    sampler: createSampler(
      options.sampler ?? { name: 'parentbased_traceidratio', ratio: options.sampleRatio ?? 1 },
    ),
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: TRACE_SERVICE_NAME,
      [ATTR_SERVICE_VERSION]: options.serviceVersion,
    }),
    spanProcessors: [
      new BatchSpanProcessor(exporter, {
        exportTimeoutMillis: OTLP_EXPORT_TIMEOUT_MS,
        ...(options.scheduledDelayMs === undefined
          ? {}
          : { scheduledDelayMillis: options.scheduledDelayMs }),
      }),
    ],
  });
}

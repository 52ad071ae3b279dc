/**
 * Which traces the service records: AGENTIC_TRACE_SAMPLE_RATIO, or OpenTelemetry's standard
 * OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (the SDK environment-variable spec's values).
 */
import type { Environment } from '../generated/config.js';

/** An OTEL_TRACES_SAMPLER value (the schema's enum is the one list). */
export type TraceSamplerName = NonNullable<Environment['OTEL_TRACES_SAMPLER']>;

/** Where {@link TraceSamplerSetting} came from. */
export type TraceSamplerSource = 'AGENTIC_TRACE_SAMPLE_RATIO' | 'OTEL_TRACES_SAMPLER' | 'default';

/** The sampler of the service's tracer provider. */
export interface TraceSamplerSetting {
  readonly name: TraceSamplerName;
  /** Share of traces kept, 0–1; read by the `*traceidratio` samplers only. */
  readonly ratio: number;
  readonly source: TraceSamplerSource;
}

/**
 * The sampler of validated, defaulted variables. An AGENTIC_TRACE_SAMPLE_RATIO that is set wins
 * (as `parentbased_traceidratio`, what it has always meant); else OTEL_TRACES_SAMPLER with
 * OTEL_TRACES_SAMPLER_ARG; else the OpenTelemetry default, `parentbased_always_on`. `isSet`
 * tells a variable given in the environment from a schema default.
 */
export function resolveTraceSampler(
  values: { ratio: number; sampler: TraceSamplerName; samplerArg: number },
  isSet: (name: 'AGENTIC_TRACE_SAMPLE_RATIO' | 'OTEL_TRACES_SAMPLER') => boolean,
): TraceSamplerSetting {
  if (isSet('AGENTIC_TRACE_SAMPLE_RATIO')) {
    return {
      name: 'parentbased_traceidratio',
      ratio: values.ratio,
      source: 'AGENTIC_TRACE_SAMPLE_RATIO',
    };
  }
  return {
    name: values.sampler,
    ratio: values.samplerArg,
    source: isSet('OTEL_TRACES_SAMPLER') ? 'OTEL_TRACES_SAMPLER' : 'default',
  };
}

/**
 * The OpenTelemetry SDK sampler of a {@link TraceSamplerSetting}: the standard OTEL_TRACES_SAMPLER
 * values mapped to the SDK's own samplers, built here so the SDK never reads the environment
 * behind the config's back.
 */
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import type { TraceSamplerSetting } from '../config/index.js';

/** The SDK sampler `setting` names. */
export function createSampler(setting: Pick<TraceSamplerSetting, 'name' | 'ratio'>): Sampler {
  // A ratio of 1 keeps every trace: AlwaysOn says so without hashing the trace id.
  const ratio = (): Sampler =>
    setting.ratio >= 1 ? new AlwaysOnSampler() : new TraceIdRatioBasedSampler(setting.ratio);
  switch (setting.name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    default: {
      const never: never = setting.name;
      return never;
    }
  }
}

import { expect } from 'chai';
import { loadConfig } from '../../../src/config/load-config.js';
import { ConfigError } from '../../../src/errors.js';

describe('config: trace sampler (AGENTIC_TRACE_SAMPLE_RATIO, OTEL_TRACES_SAMPLER[_ARG])', () => {
  it('defaults to parentbased_always_on, the OpenTelemetry default', () => {
    expect(loadConfig({}).traceSampler).to.deep.equal({
      name: 'parentbased_always_on',
      ratio: 1,
      source: 'default',
    });
  });

  it('takes OTEL_TRACES_SAMPLER and its ratio from OTEL_TRACES_SAMPLER_ARG', () => {
    const env = {
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    };
    expect(loadConfig(env).traceSampler).to.deep.equal({
      name: 'parentbased_traceidratio',
      ratio: 0.25,
      source: 'OTEL_TRACES_SAMPLER',
    });
    // Without an argument a ratio sampler keeps every trace, as the OpenTelemetry spec says.
    expect(loadConfig({ OTEL_TRACES_SAMPLER: 'traceidratio' }).traceSampler.ratio).to.equal(1);
  });

  it('lets an explicit AGENTIC_TRACE_SAMPLE_RATIO win over the OTEL variables', () => {
    const env = {
      AGENTIC_TRACE_SAMPLE_RATIO: '0.5',
      OTEL_TRACES_SAMPLER: 'always_off',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
    };
    expect(loadConfig(env).traceSampler).to.deep.equal({
      name: 'parentbased_traceidratio',
      ratio: 0.5,
      source: 'AGENTIC_TRACE_SAMPLE_RATIO',
    });
  });

  it('refuses a ratio outside 0-1 or not a number, naming the variable', () => {
    for (const arg of ['1.5', '-0.1', 'half']) {
      expect(() =>
        loadConfig({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: arg }),
      )
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes(`OTEL_TRACES_SAMPLER_ARG=${JSON.stringify(arg)}: must be`);
    }
  });
});

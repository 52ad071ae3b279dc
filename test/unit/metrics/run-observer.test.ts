import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Counter, Registry } from 'prom-client';
import {
  createRuntime,
  createServiceMetrics,
  observeRuntime,
  OTHER_LABEL,
} from '../../../src/index.js';
import { createBoundedLabel } from '../../../src/metrics/index.js';
import { sampleValue } from '../../http/metrics-scrape.js';

describe('metrics for an embedded runtime', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-metrics-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("registers in the app's own registry beside its metrics and counts the runtime's runs", async () => {
    const registry = new Registry();
    const own = new Counter({ name: 'app_requests_total', help: 'Own.', registers: [registry] });
    own.inc(3);
    const runtime = createRuntime({ noLlm: true, runsDir: dir });
    const metrics = createServiceMetrics({ registry, processDefaults: false });
    const stop = observeRuntime(runtime, metrics);
    try {
      await runtime.run({ workflow: 'test_deterministic', input: { text: 'hi' } });
      await runtime.run({ workflow: 'test_deterministic', input: { text: 'ho' } });
    } finally {
      stop();
      await runtime.shutdown();
    }
    expect(metrics.registry).to.equal(registry);
    const text = await registry.metrics();
    expect(sampleValue(text, 'app_requests_total')).to.equal(3);
    const labels = { workflow: 'test_deterministic', adapter: runtime.options.defaultAdapter };
    expect(sampleValue(text, 'agentic_runs_started_total', labels)).to.equal(2);
    expect(
      sampleValue(text, 'agentic_runs_finished_total', { ...labels, status: 'success' }),
    ).to.equal(2);
    expect(
      sampleValue(text, 'agentic_step_duration_seconds_count', {
        agent: 'tier0_echo',
        status: 'success',
      }),
    ).to.equal(2);
    // No process defaults were asked for.
    expect(text).to.not.include('agentic_process_cpu');
  });

  it('stops counting once unsubscribed', async () => {
    const runtime = createRuntime({ noLlm: true, runsDir: dir });
    const metrics = createServiceMetrics({ processDefaults: false });
    observeRuntime(runtime, metrics)();
    await runtime.run({ workflow: 'test_deterministic', input: {} });
    await runtime.shutdown();
    const text = await metrics.registry.metrics();
    expect(text).to.not.match(/^agentic_runs_started_total\{/m);
  });
});

describe('createBoundedLabel', () => {
  it('keeps the first distinct values and reports later ones as _other', () => {
    const label = createBoundedLabel(2);
    expect(['a', 'b', 'a', 'c', undefined, 'b'].map(label)).to.deep.equal([
      'a',
      'b',
      'a',
      OTHER_LABEL,
      OTHER_LABEL,
      'b',
    ]);
    expect(createBoundedLabel(5)(undefined)).to.equal('unknown');
  });
});

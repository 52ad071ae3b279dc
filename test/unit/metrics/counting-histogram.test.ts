import { expect } from 'chai';
import { Histogram, Registry } from 'prom-client';
import { CountingHistogram } from '../../../src/metrics/index.js';
import { parseSamples } from '../../http/metrics-scrape.js';

describe('CountingHistogram', () => {
  const config = {
    name: 'step_seconds',
    help: 'Step duration.',
    labelNames: ['agent', 'status'] as const,
    buckets: [0.01, 0.1, 1],
  };
  const observations: [{ agent: string; status: string }, number][] = [
    [{ agent: 'echo', status: 'success' }, 0.005],
    [{ agent: 'echo', status: 'success' }, 0.01],
    [{ agent: 'echo', status: 'success' }, 0.5],
    [{ agent: 'echo', status: 'failed' }, 7],
    [{ agent: 'tier1_x', status: 'success' }, 0.05],
  ];

  it("scrapes exactly like prom-client's Histogram fed the same observations", async () => {
    const reference = new Registry();
    const counting = new Registry();
    const theirs = new Histogram({
      ...config,
      labelNames: [...config.labelNames],
      registers: [reference],
    });
    const ours = new CountingHistogram({ ...config, registers: [counting] });
    for (const [labels, value] of observations) {
      theirs.observe(labels, value);
      ours.observe(labels, value);
    }
    const sorted = (text: string) =>
      parseSamples(text)
        .map((sample) =>
          JSON.stringify([sample.name, Object.entries(sample.labels).sort(), sample.value]),
        )
        .sort();
    const expected = sorted(await reference.metrics());
    expect(expected).to.have.length(3 * (4 + 2));
    expect(sorted(await counting.metrics())).to.deep.equal(expected);
    const text = await counting.metrics();
    expect(text).to.include('# HELP step_seconds Step duration.\n# TYPE step_seconds histogram\n');
  });

  it('forgets its series on registry reset', async () => {
    const registry = new Registry();
    const ours = new CountingHistogram({ ...config, registers: [registry] });
    ours.observe({ agent: 'echo', status: 'success' }, 1);
    registry.resetMetrics();
    expect(parseSamples(await registry.metrics())).to.deep.equal([]);
  });
});

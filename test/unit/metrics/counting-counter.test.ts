import { expect } from 'chai';
import { Counter, Registry } from 'prom-client';
import { CountingCounter } from '../../../src/metrics/index.js';
import { parseSamples } from '../../http/metrics-scrape.js';

describe('CountingCounter', () => {
  const config = {
    name: 'runs_total',
    help: 'Runs.',
    labelNames: ['workflow', 'status'] as const,
  };
  const increments: [{ workflow: string; status: string }, number | undefined][] = [
    [{ workflow: 'a', status: 'success' }, undefined],
    [{ workflow: 'a', status: 'success' }, undefined],
    [{ workflow: 'a', status: 'failed' }, 3],
    [{ workflow: 'b', status: 'success' }, 0.5],
  ];

  it("scrapes exactly like prom-client's Counter fed the same increments", async () => {
    const reference = new Registry();
    const counting = new Registry();
    const theirs = new Counter({
      ...config,
      labelNames: [...config.labelNames],
      registers: [reference],
    });
    const ours = new CountingCounter({ ...config, registers: [counting] });
    for (const [labels, value] of increments) {
      theirs.inc(labels, value);
      ours.inc(labels, value);
    }
    const expected = await reference.metrics();
    expect(parseSamples(expected)).to.have.length(3);
    expect(await counting.metrics()).to.equal(expected);
  });

  it('counts an unlabelled series, and ignores negative and non-finite increments', async () => {
    const registry = new Registry();
    const ours = new CountingCounter({
      name: 'n_total',
      help: 'N.',
      labelNames: [],
      registers: [registry],
    });
    ours.inc({});
    ours.inc({}, -1);
    ours.inc({}, Number.NaN);
    ours.inc({}, 2);
    expect(parseSamples(await registry.metrics())).to.deep.equal([
      { name: 'n_total', labels: {}, value: 3 },
    ]);
  });

  it('forgets its series on registry reset', async () => {
    const registry = new Registry();
    const ours = new CountingCounter({ ...config, registers: [registry] });
    ours.inc({ workflow: 'a', status: 'success' });
    registry.resetMetrics();
    expect(parseSamples(await registry.metrics())).to.deep.equal([]);
  });
});

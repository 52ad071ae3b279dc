/**
 * A Prometheus counter for the per-run path (runs started and finished): `inc` adds to a plain
 * number found through {@link SeriesIndex}, and the registry reads the series when it is
 * scraped, as {@link CountingHistogram} does for histograms. prom-client's Counter validates
 * and hashes its label object on every `inc`: with the run and request histograms, prom-client
 * took about 2 % of the service's main-thread time per `test_deterministic` run (`npm run
 * bench:overhead` with BENCH_OVERHEAD_PROFILE, docs/benchmarks.md). The exposition is
 * prom-client's Counter's.
 */
import type { Metric, Registry } from 'prom-client';
import type { ScrapedMetric } from './counting-histogram.js';
import { SeriesIndex } from './series-index.js';

interface Series {
  labels: Record<string, string>;
  value: number;
}

export interface CountingCounterConfig<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: readonly Registry[];
}

export class CountingCounter<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly series: SeriesIndex<L, Series>;

  constructor(config: CountingCounterConfig<L>) {
    this.name = config.name;
    this.help = config.help;
    this.series = new SeriesIndex(config.labelNames, (labels) => ({ labels, value: 0 }));
    // Duck-typed: the registry reads name, help, type, aggregator, get() and reset() only.
    for (const registry of config.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** Adds `value` (default 1; a counter never goes down: negative or non-finite is ignored). */
  inc(labels: Readonly<Record<L, string>>, value = 1): void {
    if (!Number.isFinite(value) || value < 0) return;
    this.series.of(labels).value += value;
  }

  /** What prom-client's Counter reports: one value per series. */
  get(): ScrapedMetric {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: this.series.all().map((series) => ({ labels: series.labels, value: series.value })),
    };
  }

  /** Forgets every series (`registry.resetMetrics()`). */
  reset(): void {
    this.series.clear();
  }
}

/**
 * The series of a counting metric, found by their label values through one Map per label name:
 * no key string is built per call (joining or hashing the values cost more than the counting;
 * prom-client hashes its label object on every `inc` and `observe`). Series are kept in creation
 * order, the order a scrape lists them in.
 */
export class SeriesIndex<L extends string, S> {
  /** Every series, in creation order. */
  private list: S[] = [];
  /** Label value → (next label's map | the series), one level per label name. */
  private tree = new Map<string, unknown>();
  /** The one series of a metric without labels. */
  private unlabelled: S | undefined;

  /** `create` makes the series of a new label set, given a copy of its labels. */
  constructor(
    private readonly labelNames: readonly L[],
    private readonly create: (labels: Record<string, string>) => S,
  ) {}

  /** The series of `labels`, created on first use. */
  of(labels: Readonly<Record<L, string>>): S {
    const names = this.labelNames;
    const last = names.length - 1;
    if (last < 0) return (this.unlabelled ??= this.add(labels));
    let node = this.tree;
    for (let i = 0; i < last; i++) {
      const value = labels[names[i]!];
      let next = node.get(value) as Map<string, unknown> | undefined;
      if (next === undefined) node.set(value, (next = new Map()));
      node = next;
    }
    const value = labels[names[last]!];
    let series = node.get(value) as S | undefined;
    if (series === undefined) node.set(value, (series = this.add(labels)));
    return series;
  }

  /** Every series, in creation order. */
  all(): readonly S[] {
    return this.list;
  }

  /** Forgets every series. */
  clear(): void {
    this.list = [];
    this.tree = new Map();
    this.unlabelled = undefined;
  }

  private add(labels: Readonly<Record<L, string>>): S {
    const copy: Record<string, string> = {};
    for (const name of this.labelNames) copy[name] = labels[name];
    const series = this.create(copy);
    this.list.push(series);
    return series;
  }
}

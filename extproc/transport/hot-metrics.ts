// Metrics for the per-request path: label sets are resolved once into plain cells that a request bumps in
// place (no label hashing, no closures); prom-client reads the cells when the registry is scraped.
import { Counter, type CounterConfiguration, type MetricObjectWithValues, type MetricValueWithName, type Registry } from "prom-client";

type Labels<L extends string> = Partial<Record<L, string>>;

/** Entries by label set, each made on first use (label names sorted for the key). */
class ByLabels<L extends string, E> {
  private readonly entries = new Map<string, E>();

  constructor(private readonly make: (labels: Labels<L>) => E) {}

  get(labels: Labels<L>): E {
    const key = labelKey(labels);
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = this.make(labels);
      this.entries.set(key, entry);
    }
    return entry;
  }

  values(): IterableIterator<E> {
    return this.entries.values();
  }
}

/** One label set of a HotCounter: `count++` is the whole per-request cost. */
export interface CountCell {
  count: number;
}

/** A prom-client Counter fed from cells; each scrape folds what the cells gained since the last one. */
export class HotCounter<L extends string = string> {
  readonly metric: Counter<L>;
  private readonly cells = new ByLabels<L, { labels: Labels<L>; cell: CountCell; folded: number }>((labels) => ({ labels, cell: { count: 0 }, folded: 0 }));

  constructor(config: Omit<CounterConfiguration<L>, "collect">) {
    const cells = this.cells;
    this.metric = new Counter<L>({
      ...config,
      collect() {
        for (const c of cells.values()) {
          const gained = c.cell.count - c.folded;
          if (gained > 0) this.inc(c.labels, gained);
          c.folded = c.cell.count;
        }
      },
    });
  }

  /** The cell of one label set; resolve it once per label set, outside the per-request path where possible. */
  cell(labels: Labels<L> = {}): CountCell {
    return this.cells.get(labels).cell;
  }
}

/** One label set of a HotHistogram. */
export interface HistogramCell {
  /** Counts one observation (seconds, or whatever unit the buckets are in). */
  observe(value: number): void;
}

class Cell implements HistogramCell {
  /** Per-bucket (not cumulative) counts; the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

export interface HotHistogramConfig<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  /** Upper bounds, ascending. */
  buckets: readonly number[];
  registers: Registry[];
}

/**
 * A Prometheus histogram that prom-client's Registry exposes like its own (name, help, type, get(), reset()),
 * with observations kept in typed arrays per label set.
 */
export class HotHistogram<L extends string = string> {
  readonly name: string;
  readonly help: string;
  readonly type = "histogram" as const;
  readonly aggregator = "sum" as const;
  private readonly bounds: readonly number[];
  private readonly cells: ByLabels<L, { labels: Labels<L>; cell: Cell }>;

  constructor(config: HotHistogramConfig<L>) {
    this.name = config.name;
    this.help = config.help;
    const bounds = [...config.buckets].sort((a, b) => a - b);
    this.bounds = bounds;
    this.cells = new ByLabels((labels) => ({ labels, cell: new Cell(bounds) }));
    for (const r of config.registers) r.registerMetric(this as never);
  }

  cell(labels: Labels<L> = {}): HistogramCell {
    return this.cells.get(labels).cell;
  }

  /** prom-client's metric shape: cumulative _bucket series with `le`, then _sum and _count, per label set. */
  async get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    const values: Array<MetricValueWithName<string>> = [];
    for (const { labels, cell } of this.cells.values()) {
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += cell.counts[i]!;
        const le = i < this.bounds.length ? this.bounds[i]! : "+Inf";
        values.push({ labels: { ...labels, le } as never, value: cumulative, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: labels as never, value: cell.sum, metricName: `${this.name}_sum` });
      values.push({ labels: labels as never, value: cell.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: "histogram" as never, aggregator: this.aggregator, collect: () => undefined, values };
  }

  reset(): void {
    for (const { cell } of this.cells.values()) {
      cell.counts.fill(0);
      cell.sum = 0;
      cell.count = 0;
    }
  }
}

/** A stable key for a label set (label names sorted). */
function labelKey(labels: object): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}\0${(labels as Record<string, string>)[k]}`)
    .join("\x01");
}

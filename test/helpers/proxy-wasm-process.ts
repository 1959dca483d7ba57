// What every worker VM of one Envoy process shares in the emulator: shared data (with CAS), metrics
// (one stat per name, whichever VM defined it), the clock, and the clusters http_call may target.
import { MetricType, Status } from "./proxy-wasm-abi.js";

export class SharedData {
  private readonly entries = new Map<string, { value: Uint8Array; cas: number }>();
  private casCounter = 0;

  private nextCas(): number {
    this.casCounter = (this.casCounter + 1) >>> 0;
    if (this.casCounter === 0) this.casCounter = 1;
    return this.casCounter;
  }

  get(key: string): { value: Uint8Array; cas: number } | undefined {
    return this.entries.get(key);
  }

  /** cas 0 writes unconditionally; otherwise the entry must still carry that cas (proxy-wasm-cpp-host semantics). */
  set(key: string, value: Uint8Array, cas: number): number {
    const existing = this.entries.get(key);
    if (existing && cas !== 0 && cas !== existing.cas) return Status.CasMismatch;
    this.entries.set(key, { value: value.slice(), cas: this.nextCas() });
    return Status.Ok;
  }

  /** Test convenience: the entry as text. */
  text(key: string): string | undefined {
    const entry = this.entries.get(key);
    return entry ? new TextDecoder().decode(entry.value) : undefined;
  }
}

export interface Metric { name: string; type: number; value: bigint; samples: bigint[] }

export class MetricStore {
  private readonly byName = new Map<string, Metric>();

  define(type: number, name: string): Metric | undefined {
    if (type > MetricType.Histogram) return undefined;
    const existing = this.byName.get(name);
    if (existing) return existing.type === type ? existing : undefined;
    const metric: Metric = { name, type, value: 0n, samples: [] };
    this.byName.set(name, metric);
    return metric;
  }

  get(name: string): Metric | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }
}

/** A controllable wall clock (ms since the Unix epoch). */
export class FakeClock {
  constructor(public nowMs: number = Date.UTC(2024, 4, 11, 10, 0, 0)) {}
  advance(ms: number): void { this.nowMs += ms; }
}

export interface EnvoyProcessOptions {
  clusters?: string[];
  clock?: FakeClock;
}

export class EnvoyProcess {
  readonly sharedData = new SharedData();
  readonly metrics = new MetricStore();
  readonly clock: FakeClock;
  readonly clusters: Set<string>;

  constructor(options: EnvoyProcessOptions = {}) {
    this.clock = options.clock ?? new FakeClock();
    this.clusters = new Set(options.clusters ?? ["meshext_sidecar_admin"]);
  }
}

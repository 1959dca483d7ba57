// Latency summaries (p50/p99/p99.9 of a sample), medians over repetitions, and ratios that tolerate gaps.
import { percentile } from "./envoy-load.js";

export interface LatencySummary {
  p50: number;
  p99: number;
  p999: number;
}

export function summarize(latenciesMs: number[]): LatencySummary {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), p999: percentile(sorted, 99.9) };
}

export function median(values: number[]): number {
  const v = values.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return v.length === 0 ? NaN : v[Math.floor(v.length / 2)]!;
}

export function ratio(value: number | undefined, baseline: number | undefined): number | undefined {
  return value === undefined || baseline === undefined || !baseline ? undefined : value / baseline;
}

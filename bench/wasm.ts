// Per-request cost of the drain filter in the proxy-wasm emulator, against the no-op module built
// with the same flags and ABI layer: request headers → response headers → done/log/delete. Three
// consecutive runs, each reported, without goal: the emulator's host calls are JavaScript, Envoy's are C++, so
// the goals are on the filter in Envoy (bench/through-envoy.ts). The release size keeps its goal.
// Run alone: node dist/bench/wasm.js [--quick]
import { statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ProxyWasmHost } from "../test/helpers/proxy-wasm-host.js";
import { type BenchRow, formatRows } from "./report.js";

const FILTER_WASM = join(process.cwd(), "build", "meshext_drain.wasm");
const NOOP_WASM = join(process.cwd(), "build", "noop.wasm");
const RUNS = 3;
/** = scripts/build-wasm.mjs's limit (the build fails above it). */
const SIZE_GOAL_BYTES = 24 * 1024;

const REQUEST: Array<[string, string]> = [[":method", "GET"], [":path", "/api/items?page=2"], [":authority", "app"],
  ["user-agent", "bench"], ["accept", "*/*"]];
const RESPONSE: Array<[string, string]> = [[":status", "200"], ["content-type", "application/json"], ["content-length", "42"]];

function vm(path: string, config: object | string): ProxyWasmHost {
  const host = ProxyWasmHost.load(path);
  if (!host.startPlugin(config)) throw new Error(`bench: ${path} rejected its configuration`);
  return host;
}

/** Mean ns per request over `requests` requests. */
function measure(host: ProxyWasmHost, requests: number): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < requests; i++) {
    const id = host.newHttpContext();
    host.callOnRequestHeaders(id, REQUEST, { protocol: "HTTP/1.1" });
    host.callOnResponseHeaders(id, RESPONSE);
    host.completeHttpContext(id);
  }
  return Number(process.hrtime.bigint() - start) / requests;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Requests run before measuring, in every mode: V8 tiers wasm up from its baseline compiler only after many calls. */
const WARMUP_REQUESTS = 20_000;

interface RunResult {
  /** Medians of the per-round ratios. */
  servingRatio: number;
  drainingRatio: number;
  /** Medians of the measurements themselves (ns/request). */
  serving: number;
  draining: number;
  baseline: number;
}

/**
 * One run of `rounds` rounds, each measuring the serving filter, the baseline, the draining filter and the baseline
 * again, back to back. Each filter measurement is divided by the mean of the baseline measurements either side of
 * it, so a ratio compares measurements a few milliseconds apart, and the run reports the median of those ratios:
 * drift and bursts from other processes (this machine shares its cores) hit both sides of one ratio alike and
 * move only the rounds they land in.
 */
function run(serving: ProxyWasmHost, draining: ProxyWasmHost, baseline: ProxyWasmHost, requests: number, rounds: number): RunResult {
  const servingNs: number[] = [];
  const drainingNs: number[] = [];
  const baselineNs: number[] = [];
  const servingRatios: number[] = [];
  const drainingRatios: number[] = [];
  let before = measure(baseline, requests);
  for (let r = 0; r < rounds; r++) {
    const s = measure(serving, requests);
    const between = measure(baseline, requests);
    const d = measure(draining, requests);
    const after = measure(baseline, requests);
    servingRatios.push(s / ((before + between) / 2));
    drainingRatios.push(d / ((between + after) / 2));
    servingNs.push(s);
    drainingNs.push(d);
    baselineNs.push(between, after);
    before = after;
  }
  return {
    servingRatio: median(servingRatios), drainingRatio: median(drainingRatios),
    serving: median(servingNs), draining: median(drainingNs), baseline: median(baselineNs),
  };
}

export async function benchWasm(opts: { quick: boolean }): Promise<BenchRow[]> {
  // Short measurements, many rounds: a burst of other work spoils a few rounds rather than a whole side.
  const requests = opts.quick ? 2_000 : 4_000;
  const rounds = opts.quick ? 5 : 35;
  const noop = vm(NOOP_WASM, "");
  // Serving: one host call (:path, read in place). Draining HTTP/1.1: the :path read, then per response the
  // draining header, the close marker, the protocol property and `connection: close` (the close counter goes to
  // the host per tick): five host calls, the fewest the documented behaviour allows.
  const serving = vm(FILTER_WASM, "");
  const draining = vm(FILTER_WASM, { draining: true });
  for (const host of [serving, draining, noop]) measure(host, WARMUP_REQUESTS);
  const rows: BenchRow[] = [];
  for (let i = 1; i <= RUNS; i++) {
    const r = run(serving, draining, noop, requests, rounds);
    rows.push(
      { name: `wasm drain filter, serving (vs no-op module), run ${i}/${RUNS}`, value: r.serving, unit: "ns/request", baseline: r.baseline, ratio: r.servingRatio },
      { name: `wasm drain filter, draining HTTP/1.1 (vs no-op module), run ${i}/${RUNS}`, value: r.draining, unit: "ns/request", baseline: r.baseline, ratio: r.drainingRatio },
    );
  }
  const sizeBytes = statSync(FILTER_WASM).size;
  rows.push({
    name: "wasm drain filter release size", value: sizeBytes / 1024, unit: "KiB",
    baseline: statSync(NOOP_WASM).size / 1024, goal: `≤ ${SIZE_GOAL_BYTES / 1024} KiB`,
  });
  return rows;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await benchWasm({ quick: process.argv.includes("--quick") });
  console.log(formatRows(rows));
}

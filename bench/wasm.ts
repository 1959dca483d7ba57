// Per-request cost of the drain filter in the proxy-wasm emulator, against the no-op module built
// with the same flags and ABI layer: request headers → response headers → done/log/delete.
// Run alone: node dist/bench/wasm.js [--quick]
import { statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ProxyWasmHost } from "../test/helpers/proxy-wasm-host.js";
import { type BenchRow, formatRows } from "./report.js";

const FILTER_WASM = join(process.cwd(), "build", "meshext_drain.wasm");
const NOOP_WASM = join(process.cwd(), "build", "noop.wasm");
const RATIO_GOAL = 1.5;
const SIZE_GOAL_BYTES = 16 * 1024;

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

/** Alternate filter and baseline rounds so drift (JIT, GC, CPU clock) hits both alike. */
function compare(name: string, filter: ProxyWasmHost, baseline: ProxyWasmHost, requests: number, rounds: number, goal?: string): BenchRow {
  measure(filter, WARMUP_REQUESTS);
  measure(baseline, WARMUP_REQUESTS);
  const filterNs: number[] = [];
  const baselineNs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    filterNs.push(measure(filter, requests));
    baselineNs.push(measure(baseline, requests));
  }
  const value = median(filterNs);
  const base = median(baselineNs);
  return { name, value, unit: "ns/request", baseline: base, ratio: value / base, goal };
}

export async function benchWasm(opts: { quick: boolean }): Promise<BenchRow[]> {
  const requests = opts.quick ? 2_000 : 20_000;
  const rounds = opts.quick ? 3 : 7;
  const noop = vm(NOOP_WASM, "");
  const rows: BenchRow[] = [
    // The steady state, where the goal applies: one host call (:path) per request.
    compare("wasm drain filter, serving (vs no-op module)", vm(FILTER_WASM, ""), noop, requests, rounds, `ratio ≤ ${RATIO_GOAL}`),
    // The drain window (seconds): protocol property + two header writes + a counter per response.
    compare("wasm drain filter, draining HTTP/1.1 (vs no-op module)", vm(FILTER_WASM, { draining: true }), noop, requests, rounds, "info (transient)"),
  ];
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

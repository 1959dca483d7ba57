// What meshext costs inside Envoy: h2load (HTTP/1.1 and HTTP/2) through a real Envoy (--concurrency 1) to a fast
// upstream, one Envoy per filter chain (alone, drain filter serving/draining, no-op wasm, ext_proc to meshext or the
// grpc-js echo, native RBAC), interleaved; per-request CPU of Envoy and the sidecar, RSS, latency over Envoy alone.
// Run alone: node dist/bench/run.js --only through-envoy [--quick]
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { parse } from "yaml";
import { envoyBootstrapYaml } from "../extproc/envoy-bootstrap/bootstrap.js";
import { locateEnvoy, PACKAGE_ROOT } from "../extproc/envoy-binary.js";
import { routerFilter } from "../extproc/envoy-bootstrap/http-filters.js";
import { inboundListenerName } from "../extproc/envoy-bootstrap/names.js";
import type { BootstrapOptions } from "../extproc/envoy-bootstrap/options.js";
import { stackBootstrapOptions } from "../test/helpers/envoy-stack.js";
import { envoyForTests, startEnvoy, type RealEnvoy } from "../test/helpers/real-envoy.js";
import { execH2load } from "./h2load.js";
import { CLIENT_CPU, CpuWindow, rssMiB, SERVER_CPU } from "./proc.js";
import { type BenchRow, fmt } from "./report.js";
import { startEcho, startSidecarProc, type ServerProc } from "./servers.js";
import { median, summarize } from "./stats.js";

export interface ThroughEnvoyOptions {
  /** Measured seconds per saturating run, after a separate warm-up run of warmupS. */
  durationS: number;
  warmupS: number;
  reps: number;
  /** Measured seconds per fixed-rate run, and its repetitions. */
  rateDurationS: number;
  rateReps: number;
}

/** Goals (issue 26): Envoy CPU per request of the drain filter ÷ the no-op module; meshext's added latency ÷ the echo's. */
const SERVING_CPU_RATIO_GOAL = 1.05;
const DRAINING_CPU_RATIO_GOAL = 1.1;
const ADDED_P50_RATIO_GOAL = 1.0;
const ADDED_P99_RATIO_GOAL = 1.2;

/** The fixed offered load of the latency comparison and of the README's absolute figure. */
export const FIXED_RATE_RPS = 1000;

/** Load shapes: closed-loop saturation (8 in flight) and an open-loop 1 000 req/s, per protocol. */
const PROTOCOLS = [
  { name: "HTTP/1.1", saturate: ["--h1", "-c", "8"], rate: ["--h1", "-c", "4", "--rps", String(FIXED_RATE_RPS / 4)] },
  { name: "HTTP/2", saturate: ["-c", "1", "-m", "8"], rate: ["-c", "1", "-m", "8", "--rps", String(FIXED_RATE_RPS)] },
] as const;

/**
 * Who is calling, on every request of every chain: without mTLS (h2load has no client certificates) the bench
 * sidecars trust x-kuma-tags (--trust-kuma-tags-header), and RBAC matches the same header.
 */
const CLIENT_TAGS = "&kuma.io/service=web&";

const HCM_TYPE = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const WASM_TYPE = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm";
const NOOP_WASM = join(process.cwd(), "build", "noop.wasm");

type Filter = Record<string, unknown>;

/** The generated bootstrap (as `meshext run` makes it) and its inbound listener's HTTP filters by name. */
function shippedFilters(o: BootstrapOptions): { bootstrap: Record<string, any>; filters: Map<string, Filter> } {
  const bootstrap = parse(envoyBootstrapYaml(o, "bench/through-envoy.ts")) as Record<string, any>;
  const listener = bootstrap.static_resources.listeners.find((l: { name: string }) => l.name === inboundListenerName(o.inbounds[0]!));
  const filters = listener.filter_chains[0].filters[0].typed_config.http_filters as Filter[];
  return { bootstrap, filters: new Map(filters.map((f) => [String(f.name), f])) };
}

/** The generated bootstrap with the inbound listener's filter chain replaced by `filters` + the router. */
function withFilters(bootstrap: Record<string, any>, listenerName: string, filters: Filter[]): Record<string, any> {
  const copy = structuredClone(bootstrap);
  const listener = copy.static_resources.listeners.find((l: { name: string }) => l.name === listenerName);
  listener.filter_chains[0].filters[0].typed_config.http_filters = [...filters, routerFilter()];
  return copy;
}

/** The drain filter with its plugin configuration's `draining` forced on (wasm/config.ts). */
function forcedDraining(wasm: Filter): Filter {
  const copy = structuredClone(wasm) as any;
  const configuration = copy.typed_config.config.configuration;
  configuration.value = JSON.stringify({ ...JSON.parse(configuration.value), draining: true });
  return copy;
}

const noopWasm: Filter = {
  name: "envoy.filters.http.wasm",
  typed_config: { "@type": WASM_TYPE, config: { name: "noop", vm_config: { vm_id: "noop", runtime: "envoy.wasm.runtime.v8", code: { local: { filename: NOOP_WASM } } } } },
};

/** Native RBAC with the bench policy set's one permission for backend: allow web (by the client tags), deny the rest. */
const nativeRbac: Filter = {
  name: "envoy.filters.http.rbac",
  typed_config: {
    "@type": "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC",
    rules: { action: "ALLOW", policies: { "allow-web": { permissions: [{ any: true }], principals: [{ header: { name: "x-kuma-tags", string_match: { contains: CLIENT_TAGS } } }] } } },
  },
};

/** A second Envoy answering every request with a direct 200: the fast upstream, pinned with the load generator. */
function upstreamBootstrap(): object {
  return {
    admin: { address: { socket_address: { address: "127.0.0.1", port_value: 0 } } },
    static_resources: {
      listeners: [{
        name: "upstream",
        address: { socket_address: { address: "127.0.0.1", port_value: 0 } },
        filter_chains: [{ filters: [{ name: "envoy.filters.network.http_connection_manager", typed_config: {
          "@type": HCM_TYPE, stat_prefix: "upstream", codec_type: "AUTO",
          route_config: { virtual_hosts: [{ name: "all", domains: ["*"], routes: [{ match: { prefix: "/" }, direct_response: { status: 200, body: { inline_string: "ok\n" } } }] }] },
          http_filters: [routerFilter()],
        } }] }],
      }],
    },
  };
}

/** Pins every thread of a running process (Envoy's workers exist once it is LIVE; later threads inherit it). */
function pinRunning(pid: number, cpu: string): void {
  spawnSync("taskset", ["-a", "-p", "-c", cpu, String(pid)], { stdio: "ignore" });
}

interface Chain {
  label: string;
  envoy: RealEnvoy;
  port: number;
  /** The ext_proc server this chain calls, if any. */
  sidecar?: ServerProc;
  /** Also run at the fixed rate. */
  atFixedRate: boolean;
}

export interface Cell {
  rps: number;
  p50: number;
  p99: number;
  p999: number;
  envoyUsPerReq: number;
  sidecarUsPerReq: number;
  envoyRssMiB: number;
  sidecarRssMiB: number;
  otherPct: number;
  /** Requests answered other than 2xx, or failed (latency percentiles cover the 200s). */
  notOk: number;
}

async function measure(chain: Chain, load: readonly string[], durationS: number, warmupS: number): Promise<Cell> {
  const url = `http://127.0.0.1:${chain.port}/`;
  const header = ["-H", `x-kuma-tags: ${CLIENT_TAGS}`];
  if (warmupS > 0) await execH2load([...load, "-D", `${Math.round(warmupS * 1000)}ms`, ...header, url]);
  const pids = [chain.envoy.process.pid!, ...(chain.sidecar ? [chain.sidecar.pid] : [])];
  const win = new CpuWindow(pids);
  const r = await execH2load([...load, "-D", `${Math.round(durationS * 1000)}ms`, ...header, url]);
  const cpu = win.end();
  // A misconfigured chain fails every request; a few 5xx under saturation on a loaded box are ext_proc message
  // timeouts (the shipped 200 ms), counted and shown rather than hidden.
  if (r.ok === 0 || r.non2xx + r.failed > r.ok / 100) {
    const stats = [...(await chain.envoy.stats("ext_proc|downstream_rq_[0-9]xx|response_code_details")).entries()].filter(([, v]) => v > 0);
    throw new Error(`bench: through Envoy, ${chain.label}: ${r.ok} ok, ${r.non2xx} not 2xx, ${r.failed} failed; Envoy stats: ${stats.map(([k, v]) => `${k}=${v}`).join(" ")}`);
  }
  return {
    rps: r.rps,
    ...summarize(r.latenciesMs),
    envoyUsPerReq: cpu.micros[0]! / r.ok,
    sidecarUsPerReq: chain.sidecar ? cpu.micros[1]! / r.ok : NaN,
    envoyRssMiB: rssMiB(pids[0]!),
    sidecarRssMiB: chain.sidecar ? rssMiB(chain.sidecar.pid) : NaN,
    otherPct: cpu.otherPct,
    notOk: r.non2xx + r.failed,
  };
}

function medianCell(cells: Cell[]): Cell {
  const m = (k: keyof Cell) => median(cells.map((c) => c[k]));
  return { rps: m("rps"), p50: m("p50"), p99: m("p99"), p999: m("p999"), envoyUsPerReq: m("envoyUsPerReq"), sidecarUsPerReq: m("sidecarUsPerReq"), envoyRssMiB: m("envoyRssMiB"), sidecarRssMiB: m("sidecarRssMiB"), otherPct: m("otherPct"), notOk: cells.reduce((n, c) => n + c.notOk, 0) };
}

export const CHAIN = {
  alone: "Envoy alone",
  drainServing: "+ drain filter, serving",
  drainDraining: "+ drain filter, draining",
  noop: "+ no-op wasm module",
  meshext1k: "+ ext_proc → meshext, 1 000 policies",
  meshext10k: "+ ext_proc → meshext, 10 000 policies",
  echo: "+ ext_proc → grpc-js echo",
  rbac: "+ native RBAC",
} as const;

export interface ThroughEnvoyResult {
  header: string[];
  /** Saturated rows, then the fixed-rate rows. */
  table: string[][];
  rows: BenchRow[];
}

const HEADER = ["filter chain", "load", "protocol", "req/s", "p50 ms", "p99 ms", "p99.9 ms", "Envoy CPU µs/req", "sidecar CPU µs/req", "Envoy RSS MiB", "sidecar RSS MiB", "added p50 ms", "added p99 ms", "not 2xx (all reps)", "other tenants %"];

function tableRows(cells: Map<string, Cell>, chains: Chain[], protocols: string[], load: string): string[][] {
  const out: string[][] = [];
  for (const proto of protocols) {
    const alone = cells.get(`${CHAIN.alone}|${proto}`)!;
    for (const chain of chains) {
      const c = cells.get(`${chain.label}|${proto}`);
      if (!c) continue;
      out.push([chain.label, load, proto, fmt(c.rps, 0), fmt(c.p50, 3), fmt(c.p99, 3), fmt(c.p999, 3), fmt(c.envoyUsPerReq, 1), fmt(c.sidecarUsPerReq, 1), fmt(c.envoyRssMiB, 1), fmt(c.sidecarRssMiB, 1),
        chain.label === CHAIN.alone ? "" : fmt(c.p50 - alone.p50, 3), chain.label === CHAIN.alone ? "" : fmt(c.p99 - alone.p99, 3), String(c.notOk), fmt(c.otherPct, 0)]);
    }
  }
  return out;
}

/** value ÷ baseline, or none when the baseline is not positive (an added latency lost in the noise has no ratio). */
function ratioRow(name: string, value: number, baseline: number, unit: string, goal?: string, ratio = baseline > 0 ? value / baseline : undefined): BenchRow {
  return { name, value, unit, baseline, ...(ratio !== undefined ? { ratio } : {}), ...(goal ? { goal } : {}) };
}

function goalRows(satRuns: Map<string, Cell[]>, sat: Map<string, Cell>, rate: Map<string, Cell>): BenchRow[] {
  const rows: BenchRow[] = [];
  for (const { name: proto } of PROTOCOLS) {
    const s = (label: string) => sat.get(`${label}|${proto}`)!;
    // Per repetition, the filter's CPU/request ÷ the no-op's measured seconds apart; the median of those ratios.
    const repRatio = (label: string) => {
      const noop = satRuns.get(`${CHAIN.noop}|${proto}`)!;
      return median(satRuns.get(`${label}|${proto}`)!.map((c, i) => c.envoyUsPerReq / noop[i]!.envoyUsPerReq));
    };
    rows.push(ratioRow(`drain filter serving, Envoy CPU/request (vs no-op module), ${proto}`, s(CHAIN.drainServing).envoyUsPerReq, s(CHAIN.noop).envoyUsPerReq, "µs/req", `ratio ≤ ${SERVING_CPU_RATIO_GOAL}`, repRatio(CHAIN.drainServing)));
    rows.push(ratioRow(`drain filter draining, Envoy CPU/request (vs no-op module), ${proto}`, s(CHAIN.drainDraining).envoyUsPerReq, s(CHAIN.noop).envoyUsPerReq, "µs/req", `ratio ≤ ${DRAINING_CPU_RATIO_GOAL}`, repRatio(CHAIN.drainDraining)));
  }
  for (const { name: proto } of PROTOCOLS) {
    const r = (label: string) => rate.get(`${label}|${proto}`)!;
    const added = (label: string, k: "p50" | "p99") => r(label)[k] - r(CHAIN.alone)[k];
    const at = `at ${FIXED_RATE_RPS} req/s, ${proto}`;
    rows.push(ratioRow(`meshext 1 000 policies, added p50 (vs grpc-js echo's) ${at}`, added(CHAIN.meshext1k, "p50"), added(CHAIN.echo, "p50"), "ms", `ratio ≤ ${ADDED_P50_RATIO_GOAL}`));
    rows.push(ratioRow(`meshext 1 000 policies, added p99 (vs grpc-js echo's) ${at}`, added(CHAIN.meshext1k, "p99"), added(CHAIN.echo, "p99"), "ms", `ratio ≤ ${ADDED_P99_RATIO_GOAL}`));
    rows.push(ratioRow(`meshext 10 000 policies, added p50 (vs grpc-js echo's) ${at}`, added(CHAIN.meshext10k, "p50"), added(CHAIN.echo, "p50"), "ms"));
    rows.push(ratioRow(`meshext 1 000 policies, added p50 (vs native RBAC's) ${at}`, added(CHAIN.meshext1k, "p50"), added(CHAIN.rbac, "p50"), "ms"));
  }
  for (const { name: proto } of PROTOCOLS) {
    const s = (label: string) => sat.get(`${label}|${proto}`)!;
    const added = (label: string, k: "p50" | "p99") => s(label)[k] - s(CHAIN.alone)[k];
    rows.push(ratioRow(`meshext 1 000 policies, added p50 (vs grpc-js echo's) saturated, ${proto}`, added(CHAIN.meshext1k, "p50"), added(CHAIN.echo, "p50"), "ms"));
    rows.push(ratioRow(`meshext 1 000 policies, added p99 (vs grpc-js echo's) saturated, ${proto}`, added(CHAIN.meshext1k, "p99"), added(CHAIN.echo, "p99"), "ms"));
    rows.push(ratioRow(`meshext 1 000 policies, added p50 (vs native RBAC's) saturated, ${proto}`, added(CHAIN.meshext1k, "p50"), added(CHAIN.rbac, "p50"), "ms"));
  }
  return rows;
}

export async function benchThroughEnvoy(o: ThroughEnvoyOptions, progress: (msg: string) => void): Promise<ThroughEnvoyResult | undefined> {
  if ("error" in locateEnvoy(process.env)) {
    progress("through Envoy: no Envoy yet; installing the pinned one (scripts/install-envoy.sh, as npm test's pretest does)");
    spawnSync("bash", [join(PACKAGE_ROOT, "scripts", "install-envoy.sh")], { stdio: "ignore" });
  }
  const found = envoyForTests();
  if (typeof found === "string") {
    progress(`through Envoy: skipped: ${found}`);
    return undefined;
  }
  const started: Array<{ stop(): Promise<void> }> = [];
  try {
    const upstream = await startEnvoy(found, upstreamBootstrap(), { logLevel: "error" });
    started.push(upstream);
    pinRunning(upstream.process.pid!, CLIENT_CPU);
    const upstreamPort = await upstream.listenerPort("upstream");
    const sidecarArgs = ["--trust-kuma-tags-header"];
    const meshext1k = await startSidecarProc({ policies: 1000, extraArgs: sidecarArgs, label: CHAIN.meshext1k });
    started.push(meshext1k);
    const meshext10k = await startSidecarProc({ policies: 10_000, extraArgs: sidecarArgs, label: CHAIN.meshext10k });
    started.push(meshext10k);
    const echo = await startEcho();
    started.push(echo);
    progress("through Envoy: upstream, sidecars and echo up; starting one Envoy per filter chain");

    // No stats listener: its route to the admin needs a fixed admin port, and nothing here scrapes it.
    const options = (grpc: ServerProc) => {
      const o = stackBootstrapOptions(upstreamPort, { grpc: grpc.grpc, admin: meshext1k.admin! }, {}, 0);
      delete o.stats;
      return o;
    };
    const base = options(meshext1k);
    const listenerName = inboundListenerName(base.inbounds[0]!);
    const shipped = shippedFilters(base);
    const wasm = shipped.filters.get("envoy.filters.http.wasm")!;
    const extProcTo = (s: ServerProc) => {
      const { bootstrap, filters } = shippedFilters(options(s));
      return withFilters(bootstrap, listenerName, [filters.get("envoy.filters.http.ext_proc")!]);
    };
    const specs: Array<{ label: string; bootstrap: object; sidecar?: ServerProc; atFixedRate: boolean }> = [
      { label: CHAIN.alone, bootstrap: withFilters(shipped.bootstrap, listenerName, []), atFixedRate: true },
      { label: CHAIN.drainServing, bootstrap: withFilters(shipped.bootstrap, listenerName, [wasm]), atFixedRate: false },
      { label: CHAIN.noop, bootstrap: withFilters(shipped.bootstrap, listenerName, [noopWasm]), atFixedRate: false },
      { label: CHAIN.drainDraining, bootstrap: withFilters(shipped.bootstrap, listenerName, [forcedDraining(wasm)]), atFixedRate: false },
      { label: CHAIN.meshext1k, bootstrap: extProcTo(meshext1k), sidecar: meshext1k, atFixedRate: true },
      { label: CHAIN.meshext10k, bootstrap: extProcTo(meshext10k), sidecar: meshext10k, atFixedRate: true },
      { label: CHAIN.echo, bootstrap: extProcTo(echo), sidecar: echo, atFixedRate: true },
      { label: CHAIN.rbac, bootstrap: withFilters(shipped.bootstrap, listenerName, [nativeRbac]), atFixedRate: true },
    ];
    const chains: Chain[] = [];
    for (const spec of specs) {
      // Once, on this loaded box, an Envoy exited during start-up without a word: one more try, said out loud.
      const start = () => startEnvoy(found, spec.bootstrap, { logLevel: "warning" });
      const envoy = await start().catch((err: Error) => {
        progress(`through Envoy, ${spec.label}: Envoy did not start (${err.message.split("\n")[0]}); trying once more`);
        return start();
      }).catch((err: Error) => {
        throw new Error(`bench: through Envoy, ${spec.label}: ${err.message}`);
      });
      started.push(envoy);
      pinRunning(envoy.process.pid!, SERVER_CPU);
      chains.push({ label: spec.label, envoy, port: await envoy.listenerPort(listenerName), atFixedRate: spec.atFixedRate, ...(spec.sidecar ? { sidecar: spec.sidecar } : {}) });
    }

    const satRuns = new Map<string, Cell[]>();
    for (let rep = 0; rep < o.reps; rep++) {
      for (const proto of PROTOCOLS) {
        progress(`through Envoy: saturated, ${proto.name}, rep ${rep + 1}/${o.reps}`);
        for (const chain of chains) {
          const key = `${chain.label}|${proto.name}`;
          satRuns.set(key, [...(satRuns.get(key) ?? []), await measure(chain, proto.saturate, o.durationS, o.warmupS)]);
        }
      }
    }
    const rateRuns = new Map<string, Cell[]>();
    for (let rep = 0; rep < o.rateReps; rep++) {
      for (const proto of PROTOCOLS) {
        progress(`through Envoy: ${FIXED_RATE_RPS} req/s, ${proto.name}, rep ${rep + 1}/${o.rateReps}`);
        for (const chain of chains.filter((c) => c.atFixedRate)) {
          const key = `${chain.label}|${proto.name}`;
          rateRuns.set(key, [...(rateRuns.get(key) ?? []), await measure(chain, proto.rate, o.rateDurationS, 0.5)]);
        }
      }
    }
    const sat = new Map([...satRuns].map(([k, v]) => [k, medianCell(v)]));
    const rate = new Map([...rateRuns].map(([k, v]) => [k, medianCell(v)]));
    const protocols = PROTOCOLS.map((p) => p.name);
    return { header: HEADER, table: [...tableRows(sat, chains, protocols, "saturated"), ...tableRows(rate, chains.filter((c) => c.atFixedRate), protocols, `${FIXED_RATE_RPS} req/s`)], rows: goalRows(satRuns, sat, rate) };
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
}

/** The section's method notes (run.ts prints them with the table). */
export function throughEnvoyNotes(o: ThroughEnvoyOptions): string[] {
  return [
    `h2load → a real Envoy (the pinned release, \`--concurrency 1\`, all its threads pinned to CPU ${SERVER_CPU} with the sidecar) → a fast upstream: a second Envoy answering every request with a direct 200 (\`ok\\n\`), pinned to CPU ${CLIENT_CPU} with h2load. Each filter chain runs in its own Envoy, started on the bootstrap \`meshext run\` generates (extproc/envoy-bootstrap) with the inbound listener's HTTP filters replaced: none (Envoy alone); the shipped wasm drain filter, serving, or with its plugin configuration's \`draining: true\` (every response then carries the draining and close headers; the Lua close shim is left out, so connections stay open and only the filter's own work is measured); build/noop.wasm on the same V8 runtime; the shipped ext_proc filter to \`meshext sidecar\` with 1 000 or 10 000 generated policies (bench/policy-files.ts) or to the grpc-js echo (bench/echo-server.ts: CONTINUE, response headers skipped, no policy work — the transport baseline); Envoy's native RBAC allowing the same client (the in-process limit).`,
    `Every request is \`GET /\` with \`x-kuma-tags: ${CLIENT_TAGS}\`: h2load has no client certificates, so the sidecars run with \`--trust-kuma-tags-header\` and RBAC matches that header; the policy set's one MeshTrafficPermission for backend allows web and denies the rest, so every request is decided and allowed. A chain answering more than 1 % of its requests other than 2xx fails the bench (a misconfiguration); fewer are counted in the table: under saturation on a loaded box a few ext_proc calls outlast the shipped 200 ms message timeout and Envoy answers 5xx. Latency percentiles cover the 200s. Identity from an mTLS peer certificate is not exercised here.`,
    `Saturated: closed loop, HTTP/1.1 \`h2load --h1 -c 8\`, HTTP/2 \`h2load -c 1 -m 8\` (8 in flight); a ${o.warmupS} s warm-up run, then ${o.durationS} s measured; ${o.reps} repetition(s), each running every chain and protocol in turn; medians. At ${FIXED_RATE_RPS} req/s: open loop, HTTP/1.1 \`--h1 -c 4 --rps ${FIXED_RATE_RPS / 4}\`, HTTP/2 \`-c 1 -m 8 --rps ${FIXED_RATE_RPS}\`, ${o.rateDurationS} s, ${o.rateReps} repetition(s). CPU µs/request = utime+stime (/proc/<pid>/stat, 10 ms ticks) over the measured run ÷ requests; RSS at its end; added latency = the chain's percentile − Envoy alone's in the same protocol and load.`,
    `The latency goals compare meshext with the echo at the fixed ${FIXED_RATE_RPS} req/s: under a closed loop, latency is in-flight ÷ throughput, so the saturated ratios (printed without goal) say which server is faster more than what a request waits. The drain filter's CPU goals use the saturated runs (most requests per tick of CPU accounting); the no-op chain runs between the serving and the draining filter, and a goal's ratio is the median over repetitions of filter ÷ no-op within one repetition (value and baseline are the medians). A ratio is left out when its baseline (an added latency) is not above zero. These goals replace the emulator-based wasm ratio (section 4).`,
  ];
}

// Item 1: ext_proc throughput and latency against the transport limit. h2load drives the same gRPC-framed
// request_headers stream per request into the echo server and into sidecars holding 1 / 1 000 / 10 000
// policies, at each in-flight level; repetitions interleave the servers so machine noise hits all alike.
import { type H2loadResult, runH2load } from "./h2load.js";
import { runLoadProc } from "./load-proc.js";
import { waitQuiet } from "./machine.js";
import { CpuWindow, rssMiB, sleep } from "./proc.js";
import { type BenchRow, fmt } from "./report.js";
import { type ServerProc, startEcho, startSidecarProc } from "./servers.js";
import { median, ratio, summarize } from "./stats.js";

export interface ThroughputOptions {
  inFlight: number[];
  policies: number[];
  durationS: number;
  warmupS: number;
  reps: number;
  quietMaxMs: number;
  /** Wait after the servers start before their idle RSS is read (bench/proc.ts IDLE_SETTLE_MS). */
  idleSettleMs: number;
  /** Load generator: h2load, or the grpc-js Envoy emulator (graceful close) when h2load is missing. */
  generator: "h2load" | "grpc-js";
}

export interface Cell {
  server: string;
  /** undefined for the echo servers. */
  policies?: number;
  /** The echo on the sidecar's own transport (informative; the goals compare with the grpc-js echo). */
  transportEcho?: boolean;
  inFlight: number;
  rps: number;
  p50: number;
  p99: number;
  p999: number;
  cpuUsPerReq: number;
  failed: number;
  otherPct: number;
  rssPeakMiB: number;
}

export interface ThroughputResult {
  cells: Cell[];
  idleRssMiB: Record<string, number>;
  header: string[];
  table: string[][];
  goals: BenchRow[];
}

/** One measured run against one server (also used by the decision-log section). */
export async function measureOne(s: ServerProc, inFlight: number, o: Omit<ThroughputOptions, "inFlight" | "policies" | "reps" | "idleSettleMs">): Promise<Omit<Cell, "server" | "policies" | "inFlight">> {
  if (o.quietMaxMs > 0) await waitQuiet(50, o.quietMaxMs);
  let rssPeak = rssMiB(s.pid);
  const poll = setInterval(() => (rssPeak = Math.max(rssPeak, rssMiB(s.pid))), 250);
  let win: CpuWindow | undefined;
  const startCpu = setTimeout(() => (win = new CpuWindow([s.pid])), o.warmupS * 1000);
  let r: H2loadResult;
  try {
    r = o.generator === "h2load" ? await runH2load(s.grpc, inFlight, { durationS: o.durationS, warmupS: o.warmupS }) : await viaGrpcJs(s.grpc, inFlight, o);
  } finally {
    clearInterval(poll);
    clearTimeout(startCpu);
  }
  const cpu = win?.end();
  const lat = summarize(r.latenciesMs);
  return { rps: r.rps, ...lat, cpuUsPerReq: cpu && r.ok ? cpu.micros[0]! / r.ok : NaN, failed: r.failed, otherPct: cpu?.otherPct ?? NaN, rssPeakMiB: rssPeak };
}

/** The same measurement with the grpc-js emulator: warm-up requests are dropped by start time. */
async function viaGrpcJs(target: string, inFlight: number, o: Pick<ThroughputOptions, "durationS" | "warmupS">): Promise<H2loadResult> {
  const r = await runLoadProc({ target, inFlight, durationMs: (o.durationS + o.warmupS) * 1000, closeMode: "graceful", samples: true });
  const t0 = r.samples![0]?.[0] ?? 0;
  const kept = r.samples!.filter((x) => x[0] >= t0 + o.warmupS * 1000);
  const ok = kept.filter((x) => !x[2]);
  return { ok: ok.length, failed: kept.length - ok.length, non2xx: 0, rps: ok.length / o.durationS, samples: ok.map((x) => [x[0], x[1]]), latenciesMs: ok.map((x) => x[1]).sort((a, b) => a - b) };
}

export async function benchThroughput(o: ThroughputOptions, progress: (msg: string) => void): Promise<ThroughputResult> {
  const servers: Array<{ s: ServerProc; policies?: number; transportEcho?: boolean }> = [];
  const idleRssMiB: Record<string, number> = {};
  try {
    servers.push({ s: await startEcho() });
    servers.push({ s: await startEcho("meshext"), transportEcho: true });
    // h2load does not reconnect after a GOAWAY, and its END_STREAM close never trips the rapid-reset
    // limit, so these sidecars run without connection rotation (measured in the close-pattern bench).
    for (const n of o.policies) servers.push({ s: await startSidecarProc({ policies: n, maxStreamsPerConnection: 0 }), policies: n });
    await sleep(o.idleSettleMs);
    for (const { s } of servers) idleRssMiB[s.label] = rssMiB(s.pid);
    const runs = new Map<string, Array<Omit<Cell, "server" | "policies" | "inFlight">>>();
    for (const inFlight of o.inFlight) {
      for (let rep = 0; rep < o.reps; rep++) {
        for (const { s } of servers) {
          progress(`throughput: ${s.label}, ${inFlight} in flight, rep ${rep + 1}/${o.reps}`);
          const key = `${s.label}|${inFlight}`;
          runs.set(key, [...(runs.get(key) ?? []), await measureOne(s, inFlight, o)]);
        }
      }
    }
    const cells: Cell[] = [];
    for (const inFlight of o.inFlight) {
      for (const { s, policies, transportEcho } of servers) {
        const rs = runs.get(`${s.label}|${inFlight}`)!;
        const m = (f: (x: (typeof rs)[number]) => number) => median(rs.map(f));
        cells.push({ server: s.label, policies, ...(transportEcho ? { transportEcho } : {}), inFlight, rps: m((x) => x.rps), p50: m((x) => x.p50), p99: m((x) => x.p99), p999: m((x) => x.p999),
          cpuUsPerReq: m((x) => x.cpuUsPerReq), failed: rs.reduce((a, x) => a + x.failed, 0), otherPct: m((x) => x.otherPct), rssPeakMiB: Math.max(...rs.map((x) => x.rssPeakMiB)) });
      }
    }
    return { cells, idleRssMiB, ...tableOf(cells), goals: goalsOf(cells) };
  } finally {
    for (const { s } of servers) await s.stop();
  }
}

function tableOf(cells: Cell[]): { header: string[]; table: string[][] } {
  const header = ["server", "in flight", "req/s", "p50 ms", "p99 ms", "p99.9 ms", "server CPU µs/req", "req/s ÷ echo", "p99 ÷ echo", "CPU ÷ echo", "failed", "other tenants CPU %"];
  const table = cells.map((c) => {
    const echo = cells.find((e) => isGrpcJsEcho(e) && e.inFlight === c.inFlight);
    const base = isGrpcJsEcho(c);
    return [c.server, String(c.inFlight), fmt(c.rps, 0), fmt(c.p50, 2), fmt(c.p99, 2), fmt(c.p999, 2), fmt(c.cpuUsPerReq, 0),
      base ? "1" : fmt(ratio(c.rps, echo?.rps), 2), base ? "1" : fmt(ratio(c.p99, echo?.p99), 2), base ? "1" : fmt(ratio(c.cpuUsPerReq, echo?.cpuUsPerReq), 2), String(c.failed), fmt(c.otherPct, 0)];
  });
  return { header, table };
}

/** The baseline every ratio is taken against. */
export function isGrpcJsEcho(c: Cell): boolean {
  return c.policies === undefined && !c.transportEcho;
}

function goalsOf(cells: Cell[]): BenchRow[] {
  const at = (policies: number | undefined, inFlight: number) => cells.find((c) => c.policies === policies && !c.transportEcho && c.inFlight === inFlight);
  const inFlight = cells.some((c) => c.inFlight === 64) ? 64 : Math.max(...cells.map((c) => c.inFlight));
  const ours = at(1000, inFlight) ?? at(Math.max(...cells.map((c) => c.policies ?? 0)), inFlight);
  const echo = at(undefined, inFlight);
  if (!ours || !echo) return [];
  const what = `${inFlight} in flight, ${ours.policies} policies`;
  return [
    { name: `ext_proc req/s, ${what} (vs echo)`, value: ours.rps, unit: "req/s", baseline: echo.rps, ratio: ratio(ours.rps, echo.rps), goal: "ratio ≥ 0.8" },
    { name: `ext_proc p99, ${what} (vs echo)`, value: ours.p99, unit: "ms", baseline: echo.p99, ratio: ratio(ours.p99, echo.p99), goal: "ratio ≤ 1.5" },
    { name: `ext_proc server CPU, ${what} (vs echo)`, value: ours.cpuUsPerReq, unit: "µs/req", baseline: echo.cpuUsPerReq, ratio: ratio(ours.cpuUsPerReq, echo.cpuUsPerReq) },
  ];
}

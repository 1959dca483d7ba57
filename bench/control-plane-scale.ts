// Control plane under many sidecars: N simulated sidecars each hold one long-poll per policy kind (as the
// HTTP policy source does) and heartbeat at the default interval, against `meshext control-plane` (a child
// process) holding 2 000 policies; heartbeat and unrelated-GET latency, and the control plane's CPU.
// Baseline: the same heartbeats and GETs with no long-polls held. Run alone: node dist/bench/control-plane-scale.js [--quick]
// [--only-1000 | --sidecars N] [--page-size N]; MESHEXT_BENCH_CP_NODE_FLAGS="--trace-gc" (or --cpu-prof) passes Node flags to the control plane.
import { Agent } from "node:http";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { stringify } from "yaml";
import { SIDECAR_FLAGS } from "../extproc/config/sidecar.js";
import { POLICY_TYPES } from "../extproc/kuma-rest/resources.js";
import { policyDoc } from "./policy-files.js";
import { SIDECAR_ENV } from "../extproc/config/runtime.js";
import { EVENT_LOOP_SAMPLE_MS } from "../extproc/process-metrics.js";
import { type BenchChild, forkBenchChild } from "./cp-scale-children.js";
import { type ChildArgs, type FromChild, getText, LONG_POLL_WAIT, send } from "./cp-scale-http.js";
import { CLIENT_CPU, CpuWindow, SERVER_CPU, sleep, spawnPinned, stopChild, waitForLine } from "./proc.js";
import { type BenchRow } from "./report.js";
import { summarize } from "./stats.js";

export interface ControlPlaneScaleOptions {
  sidecars: number[];
  policies: number;
  /** Measured window per run. */
  durationS: number;
  /** Unrelated GETs per second (one policy list page each). */
  getsPerSecond: number;
  /** Policy writes per second during the window (each wakes the MeshTrafficPermission long-polls). */
  writesPerSecond: number;
  /** Items per page the simulated sidecars' long-polls ask for (`size=`); 100 unless set. */
  longPollPageSize?: number;
}

const HEARTBEAT_INTERVAL_MS = SIDECAR_FLAGS.find((f) => f.key === "heartbeatIntervalMs")!.default as number;

/** The prober's priority (renice; as root, higher than the load's 0). */
const PROBER_NICE = -5;

/** Processes the simulated sidecars are split over (each holds sidecars/SIDECAR_PROCESSES × 4 long-polls). */
const SIDECAR_PROCESSES = 2;

/** A data directory with `policies` policies and `dataplanes` online Dataplanes, written as the store lays them out. */
export function seedDataDir(policies: number, dataplanes: number): string {
  const dir = mkdtempSync(join(tmpdir(), "meshext-cp-scale-"));
  const plural = new Map(POLICY_TYPES.map((t) => [t.kind, t.plural]));
  for (let i = 0; i < policies; i++) {
    const doc = policyDoc(i, 0) as { type: string; name: string };
    const at = join(dir, "meshes", "default", plural.get(doc.type)!);
    mkdirSync(at, { recursive: true });
    writeFileSync(join(at, `${doc.name}.yaml`), stringify(doc));
  }
  const dpDir = join(dir, "meshes", "default", "dataplanes");
  mkdirSync(dpDir, { recursive: true });
  const now = new Date().toISOString();
  for (let i = 0; i < dataplanes; i++) {
    const dp = { type: "Dataplane", mesh: "default", name: `dp-${i}`, networking: { address: "10.0.0.1", inbound: [{ port: 8080, tags: { "kuma.io/service": `svc-${i}` } }] }, status: { state: "online", lastSeenTime: now } };
    writeFileSync(join(dpDir, `dp-${i}.yaml`), stringify(dp));
  }
  return dir;
}

interface RunResult {
  heartbeatMs: number[];
  getMs: number[];
  /** CPU over the window (cores): the control plane, the prober, the sidecar processes together, this process (writes). */
  cpuCores: { controlPlane: number; prober: number; sidecars: number; writer: number };
  /** What everything else on the machine used over the window, % of one core. */
  otherTenantsPct: number;
  longPollAnswers: number;
  writes: number;
  errors: number;
  /** Upper bound of the control plane's own latency histogram bucket holding its slowest heartbeat, ms. */
  serverHeartbeatMaxMs: number;
  /** The control plane's event-loop delay over the window (meshext_control_plane_nodejs_eventloop_lag_*), ms. */
  eventLoopMaxMs: number;
  eventLoopP99Ms: number;
}

/** The smallest bucket bound (ms) of meshext_control_plane_http_request_duration_seconds holding every heartbeat. */
function serverHeartbeatMaxMs(metrics: string): number {
  const buckets = metrics.split("\n").filter((l) => l.includes("_bucket{") && l.includes("_heartbeat") && l.includes('status="200"'));
  const total = Number(buckets.find((l) => l.includes('le="+Inf"'))?.split(" ")[1] ?? 0);
  const bound = buckets.map((l) => ({ le: Number(/le="([^"]+)"/.exec(l)![1]), n: Number(l.split(" ")[1]) })).filter((b) => Number.isFinite(b.le) && b.n >= total);
  return bound.length ? Math.min(...bound.map((b) => b.le)) * 1000 : NaN;
}

/** A gauge's value in ms from a /metrics text (seconds), NaN when absent. */
function gaugeMs(metrics: string, name: string): number {
  const line = metrics.split("\n").find((l) => l.startsWith(name + " "));
  return line ? Number(line.split(" ")[1]) * 1000 : NaN;
}

/**
 * The event-loop delay in ms from a lag gauge: monitorEventLoopDelay records the time between its timer's runs,
 * so an idle loop reads EVENT_LOOP_SAMPLE_MS; what is over that is the delay.
 */
function lagMs(metrics: string, name: string): number {
  return Math.max(0, gaugeMs(metrics, name) - EVENT_LOOP_SAMPLE_MS);
}

/**
 * One run: `sidecars` heartbeating sidecars, holding long-polls when `withLongPolls`. Four processes: the control
 * plane (pinned to SERVER_CPU), the simulated sidecars (SIDECAR_PROCESSES children on CLIENT_CPU), the
 * prober timing heartbeats and GETs (a child doing nothing else), and this one, which only writes.
 */
async function run(sidecars: number, withLongPolls: boolean, opts: ControlPlaneScaleOptions): Promise<RunResult> {
  const dataDir = seedDataDir(opts.policies, sidecars);
  const child = spawnPinned(SERVER_CPU, process.execPath, [...(process.env.MESHEXT_BENCH_CP_NODE_FLAGS ?? "").split(" ").filter(Boolean), "dist/extproc/cli.js", "control-plane", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--log-level", "info"], SIDECAR_ENV);
  if (process.env.MESHEXT_BENCH_CP_NODE_FLAGS) child.stdout!.on("data", (d: Buffer) => process.stderr.write(d.toString().split("\n").filter((l) => l && !l.startsWith("{")).map((l) => `[cp] ${l}\n`).join("")));
  const agent = new Agent({ keepAlive: true, maxSockets: 8, timeout: 4000 });
  const children: BenchChild[] = [];
  const result: RunResult = { heartbeatMs: [], getMs: [], cpuCores: { controlPlane: 0, prober: 0, sidecars: 0, writer: 0 }, otherTenantsPct: 0, longPollAnswers: 0, writes: 0, errors: 0, serverHeartbeatMaxMs: NaN, eventLoopMaxMs: NaN, eventLoopP99Ms: NaN };
  const timers: NodeJS.Timeout[] = [];
  try {
    const line = await waitForLine(child, (l) => l.msg === "control plane listening", 60_000, "control plane start");
    const base = new URL(String(line.url));
    await sleep(2000); // the control plane's first seconds (JIT, first sweep) are not what this measures
    const args: ChildArgs = { baseUrl: base.href, sidecars: 0, totalSidecars: sidecars, heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS, getsPerSecond: opts.getsPerSecond, pageSize: opts.longPollPageSize ?? 100 };
    const sims: BenchChild[] = [];
    if (withLongPolls) {
      const per = Math.ceil(sidecars / SIDECAR_PROCESSES);
      for (let first = 0; first < sidecars; first += per) {
        sims.push(await forkBenchChild("cp-scale-sidecars", { ...args, sidecars: Math.min(per, sidecars - first) }, { cpu: CLIENT_CPU }));
      }
      children.push(...sims);
      // Measure only once every long-poll has been sent (and so is held), plus a settling second.
      const sent = sims.map(() => 0);
      sims.forEach((s, i) => s.each((m) => m.type === "armed" && (sent[i] = m.sent)));
      const armBy = Date.now() + 60_000;
      while (sent.reduce((a, b) => a + b, 0) < sidecars * POLICY_TYPES.length && Date.now() < armBy) await sleep(100);
      await sleep(1000);
    }
    // The measuring client runs ahead of the load (the simulated sidecars burst ~40 MB of reads per write): its
    // own wait for a CPU is not the control plane's latency.
    const prober = await forkBenchChild("cp-scale-prober", args, { nice: PROBER_NICE });
    children.push(prober);
    // Writes: one MeshTrafficPermission edited in place at a fixed rate, so its 1 000-waiter collection wakes.
    let generation = 0;
    const write = () => {
      const doc: Record<string, unknown> = { ...(policyDoc(0, 0) as Record<string, unknown>), labels: { "bench/generation": String(++generation) } };
      return send(agent, base, "PUT", `/meshes/default/meshtrafficpermissions/${String(doc.name)}`, {}, JSON.stringify(doc));
    };
    if (opts.writesPerSecond > 0) {
      timers.push(setInterval(() => void write().then((r) => (r.status === 200 ? result.writes++ : result.errors++), () => result.errors++), 1000 / opts.writesPerSecond));
    }
    await sleep(1000); // warm-up
    await getText(agent, base, "/metrics"); // resets the event-loop delay histogram: what follows is the window's
    for (const c of children) c.tell({ type: "measure" });
    const writes0 = result.writes;
    const window = new CpuWindow([child.pid!, prober.pid, ...sims.map((s) => s.pid), process.pid]);
    await sleep(opts.durationS * 1000);
    const used = window.end();
    const cores = (us: number) => us / used.wallMicros;
    result.cpuCores = { controlPlane: cores(used.micros[0]!), prober: cores(used.micros[1]!), sidecars: cores(used.micros.slice(2, -1).reduce((a, b) => a + b, 0)), writer: cores(used.micros.at(-1)!) };
    result.otherTenantsPct = used.otherPct;
    result.writes -= writes0;
    for (const t of timers) clearInterval(t);
    const metrics = await getText(agent, base, "/metrics").catch(() => "");
    result.serverHeartbeatMaxMs = serverHeartbeatMaxMs(metrics);
    result.eventLoopMaxMs = lagMs(metrics, "meshext_control_plane_nodejs_eventloop_lag_max_seconds");
    result.eventLoopP99Ms = lagMs(metrics, "meshext_control_plane_nodejs_eventloop_lag_p99_seconds");
    const reports = await Promise.all(children.map((c) => (c.tell({ type: "report" }), c.next((m): m is Extract<FromChild, { type: "result" }> => m.type === "result"))));
    for (const r of reports) {
      result.heartbeatMs.push(...(r.heartbeatMs ?? []));
      result.getMs.push(...(r.getMs ?? []));
      result.longPollAnswers += r.longPollAnswers ?? 0;
      result.errors += r.errors;
    }
  } finally {
    for (const t of timers) clearInterval(t);
    await Promise.all(children.map((c) => c.stop()));
    await stopChild(child);
    agent.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return result;
}

export async function benchControlPlaneScale(opts: ControlPlaneScaleOptions, progress: (msg: string) => void): Promise<{ header: string[]; table: string[][]; rows: BenchRow[] }> {
  const header = ["sidecars", "long-polls held", "heartbeats/s", "writes", "heartbeat p50 ms", "heartbeat p99 ms", "heartbeat max ms", "CP-side heartbeat max ≤ ms", "GET p99 ms", "GET max ms", "CP event-loop delay p99 / max ms", "CPU cores: CP / prober / sidecars / writer", "other tenants % of a core", "errors"];
  const table: string[][] = [];
  const rows: BenchRow[] = [];
  const paged = opts.longPollPageSize && opts.longPollPageSize !== 100 ? ` pages of ${opts.longPollPageSize}` : "";
  for (const n of opts.sidecars) {
    progress(`control plane scale: ${n} sidecars, heartbeats only (baseline)`);
    const base = await run(n, false, opts);
    progress(`control plane scale: ${n} sidecars holding ${n * POLICY_TYPES.length} long-polls`);
    const held = await run(n, true, opts);
    for (const [what, r] of [["baseline (no long-polls)", base], [`${n * POLICY_TYPES.length}`, held]] as const) {
      const hb = summarize(r.heartbeatMs);
      const get = summarize(r.getMs);
      const cpu = r.cpuCores;
      table.push([String(n), what, (1000 / (HEARTBEAT_INTERVAL_MS / n)).toFixed(0), String(r.writes), hb.p50.toFixed(1), hb.p99.toFixed(1), maxOf(r.heartbeatMs).toFixed(1), String(r.serverHeartbeatMaxMs), get.p99.toFixed(1), maxOf(r.getMs).toFixed(1), `${r.eventLoopP99Ms.toFixed(1)} / ${r.eventLoopMaxMs.toFixed(1)}`, [cpu.controlPlane, cpu.prober, cpu.sidecars, cpu.writer].map((c) => c.toFixed(3)).join(" / "), r.otherTenantsPct.toFixed(0), String(r.errors)]);
    }
    const goal = n >= 1000;
    const row = (name: string, value: number, baseline: number, unit: string, goalText?: string): BenchRow => ({ name, value, unit, baseline, ratio: value / baseline, ...(goal && goalText ? { goal: goalText } : {}) });
    rows.push(row(`heartbeat p99, ${n} sidecars long-polling${paged}`, summarize(held.heartbeatMs).p99, summarize(base.heartbeatMs).p99, "ms", "≤ 20 ms (issue 14)"));
    rows.push(row(`unrelated GET p99, ${n} sidecars long-polling${paged}`, summarize(held.getMs).p99, summarize(base.getMs).p99, "ms"));
    for (const [what, held_, base_] of [["heartbeat", held.heartbeatMs, base.heartbeatMs], ["unrelated GET", held.getMs, base.getMs]] as const) {
      rows.push(row(`${what} max, ${n} sidecars long-polling${paged}, ${opts.writesPerSecond} write/s`, maxOf(held_), maxOf(base_), "ms", "≤ 50 ms (issue 28)"));
    }
    rows.push(row(`control plane event-loop delay max, ${n} sidecars long-polling${paged}`, held.eventLoopMaxMs, base.eventLoopMaxMs, "ms"));
    rows.push(row(`control plane CPU, ${n} sidecars long-polling${paged}`, held.cpuCores.controlPlane, base.cpuCores.controlPlane, "cores", "≤ 0.5 cores (issue 14: below half a core)"));
    rows.push(row(`errors, ${n} sidecars long-polling${paged} (${held.writes} writes in the window, each answered 200 unless counted here)`, held.errors, base.errors, "errors", "= 0 (issue 28)"));
  }
  return { header, table, rows };
}

function maxOf(values: number[]): number {
  return values.reduce((a, b) => Math.max(a, b), 0);
}

/** Notes for the section, shared by bench/run.ts and the standalone run. */
export function controlPlaneScaleNotes(opts: ControlPlaneScaleOptions): string[] {
  return [
    `bench/control-plane-scale.ts: \`meshext control-plane\` (a child process pinned to CPU ${SERVER_CPU}) starts on a data directory holding ${opts.policies} policies (bench/policy-files.ts's mix over the four kinds) and N online Dataplanes. N simulated sidecars each hold one long-poll per policy kind (\`If-None-Match\` + \`?wait=${LONG_POLL_WAIT}\` on pages of ${opts.longPollPageSize ?? 100}, re-armed when answered, as extproc/policy-source/http-source.ts does) and heartbeat once per --heartbeat-interval (${HEARTBEAT_INTERVAL_MS / 1000} s default), spread evenly; ${opts.getsPerSecond} unrelated GETs/s read one 100-item page of the MeshTrafficPermission list; ${opts.writesPerSecond} PUT/s edits one MeshTrafficPermission in place (a new label each time), waking every sidecar's MeshTrafficPermission long-poll. ${opts.durationS} s measured after 1 s warm-up.`,
    `Processes: the control plane (pinned to CPU ${SERVER_CPU}); the simulated sidecars' long-polls in ${SIDECAR_PROCESSES} child processes (bench/cp-scale-sidecars.ts, pinned to CPU ${CLIENT_CPU}: they are the load and read every woken page, ~40 MB per write; niced, they fell behind and met resets on sockets the control plane had closed as idle); a prober child doing nothing but the heartbeats and GETs it times (bench/cp-scale-prober.ts, not pinned, at nice ${PROBER_NICE} so that the load's bursts do not hold the measuring client off a CPU; the control plane runs at the default priority); the bench process itself only writes.`,
    "CP-side heartbeat max: the control plane's own latency histogram (arrival to reply), the bucket bound holding its slowest heartbeat. CP event-loop delay: its meshext_control_plane_nodejs_eventloop_lag_{p99,max}_seconds over the window (perf_hooks monitorEventLoopDelay, reset by a scrape at the window's start) minus its ${EVENT_LOOP_SAMPLE_MS} ms sampling interval, which an idle loop reads. It holds the time the OS did not run the control plane, not only its own work.",
    "Baseline: the same heartbeats, GETs and writes with no long-poll held. CPU = utime+stime of each process over the window ÷ wall time; other tenants = the machine's busy time minus these processes', in % of one core (the machine's load during the run).",
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const quick = process.argv.includes("--quick");
  // --sidecars N (one count) and --page-size N reproduce other shapes, e.g. 500 waiters on pages of 1 000.
  const flag = (name: string) => {
    const i = process.argv.indexOf(name);
    if (i < 0) return undefined;
    const n = Number(process.argv[i + 1]);
    if (!Number.isInteger(n) || n < 1) {
      console.error(`${name} takes a positive whole number`);
      process.exit(2);
    }
    return n;
  };
  const only = flag("--sidecars") ?? (process.argv.includes("--only-1000") ? 1000 : undefined);
  const opts: ControlPlaneScaleOptions = { sidecars: only ? [only] : [100, 1000], policies: 2000, durationS: quick ? 10 : 20, getsPerSecond: 20, writesPerSecond: 1, longPollPageSize: flag("--page-size") };
  const t0 = Date.now();
  const out = await benchControlPlaneScale(opts, (m) => process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(0)}s] ${m}\n`));
  const { formatRows, formatTable } = await import("./report.js");
  console.log(controlPlaneScaleNotes(opts).join("\n"));
  console.log(formatTable(out.header, out.table));
  console.log(formatRows(out.rows));
  process.exit(0);
}

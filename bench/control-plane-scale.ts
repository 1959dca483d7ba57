// Control plane under many sidecars: N simulated sidecars each hold one long-poll per policy kind (as the
// HTTP policy source does) and heartbeat at the default interval, against `meshext control-plane` (a child
// process) holding 2 000 policies; heartbeat and unrelated-GET latency, and the control plane's CPU.
// Baseline: the same heartbeats and GETs with no long-polls held. Run alone: node dist/bench/control-plane-scale.js [--quick]
import { Agent, request } from "node:http";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { stringify } from "yaml";
import { SIDECAR_FLAGS } from "../extproc/config/sidecar.js";
import { POLICY_TYPES } from "../extproc/kuma-rest/resources.js";
import { policyDoc } from "./policy-files.js";
import { SIDECAR_ENV } from "../extproc/config/runtime.js";
import { cpuMicros, SERVER_CPU, sleep, spawnPinned, stopChild, waitForLine } from "./proc.js";
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
}

const HEARTBEAT_INTERVAL_MS = SIDECAR_FLAGS.find((f) => f.key === "heartbeatIntervalMs")!.default as number;
const LONG_POLL_WAIT = "30s";

interface Reply {
  status: number;
  etag?: string;
}

function send(agent: Agent, base: URL, method: string, path: string, headers: Record<string, string> = {}, body?: string, onSent?: () => void): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: base.hostname, port: base.port, method, path, headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) } }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, etag: res.headers.etag }));
      res.on("error", reject);
    });
    req.on("error", reject);
    if (onSent) req.once("finish", onSent);
    req.end(body);
  });
}

/** A data directory with `policies` policies and `dataplanes` online Dataplanes, written as the store lays them out. */
function seedDataDir(policies: number, dataplanes: number): string {
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
  cpuCores: number;
  longPollAnswers: number;
  writes: number;
  errors: number;
  /** Upper bound of the control plane's own latency histogram bucket holding its slowest heartbeat, ms. */
  serverHeartbeatMaxMs: number;
}

/** The smallest bucket bound (ms) of meshext_control_plane_http_request_duration_seconds holding every heartbeat. */
async function serverHeartbeatMaxMs(agent: Agent, base: URL): Promise<number> {
  const text = await new Promise<string>((resolve, reject) => {
    request({ agent, host: base.hostname, port: base.port, path: "/metrics" }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve(body));
    }).on("error", reject).end();
  });
  const buckets = text.split("\n").filter((l) => l.includes("_bucket{") && l.includes("_heartbeat") && l.includes('status="200"'));
  const total = Number(buckets.find((l) => l.includes('le="+Inf"'))?.split(" ")[1] ?? 0);
  const bound = buckets.map((l) => ({ le: Number(/le="([^"]+)"/.exec(l)![1]), n: Number(l.split(" ")[1]) })).filter((b) => Number.isFinite(b.le) && b.n >= total);
  return bound.length ? Math.min(...bound.map((b) => b.le)) * 1000 : NaN;
}

/** One run: `sidecars` heartbeating sidecars, holding long-polls when `withLongPolls`. */
async function run(sidecars: number, withLongPolls: boolean, opts: ControlPlaneScaleOptions): Promise<RunResult> {
  const dataDir = seedDataDir(opts.policies, sidecars);
  const child = spawnPinned(SERVER_CPU, process.execPath, ["dist/extproc/cli.js", "control-plane", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--log-level", "info"], SIDECAR_ENV);
  const pollAgent = new Agent({ keepAlive: true, maxSockets: Infinity });
  // Idle keep-alive sockets are dropped before the control plane's 5 s keepAliveTimeout closes them, so no
  // request is sent on a socket the server is closing (that race shows up as resets and retries, not as our cost).
  const callAgent = new Agent({ keepAlive: true, maxSockets: 64, timeout: 4000 });
  let stopping = false;
  const result: RunResult = { heartbeatMs: [], getMs: [], cpuCores: 0, longPollAnswers: 0, writes: 0, errors: 0, serverHeartbeatMaxMs: NaN };
  try {
    const line = await waitForLine(child, (l) => l.msg === "control plane listening", 60_000, "control plane start");
    const base = new URL(String(line.url));
    await sleep(2000); // the control plane's first seconds (JIT, first sweep) are not what this measures
    // Long-polls: one per kind per sidecar, re-armed as soon as answered (304 at the end of each wait).
    const polls: Promise<void>[] = [];
    if (withLongPolls) {
      let sent = 0;
      const etags = new Map<string, string>();
      for (const t of POLICY_TYPES) etags.set(t.plural, (await send(callAgent, base, "GET", `/meshes/default/${t.plural}?size=100`)).etag ?? "");
      for (let s = 0; s < sidecars; s++) {
        for (const t of POLICY_TYPES) {
          polls.push(
            (async () => {
              // Each sidecar re-arms with the ETag it was last answered (a changed list is read again at that tag).
              let etag = etags.get(t.plural)!;
              while (!stopping) {
                const r = await send(pollAgent, base, "GET", `/meshes/default/${t.plural}?size=100&wait=${LONG_POLL_WAIT}`, { "if-none-match": etag }, undefined, () => sent++).catch(() => {
                  if (!stopping) result.errors++;
                  return undefined;
                });
                if (r?.etag) etag = r.etag;
                if (r && !stopping) result.longPollAnswers++;
                if (!r) await sleep(100);
              }
            })(),
          );
        }
      }
      // Measure only once every long-poll has been sent (and so is held), plus a settling second.
      const armBy = Date.now() + 60_000;
      while (sent < sidecars * POLICY_TYPES.length && Date.now() < armBy) await sleep(100);
      await sleep(1000);
    }
    // Heartbeats: every sidecar once per interval, spread evenly; GETs at a fixed rate.
    const timers: NodeJS.Timeout[] = [];
    let measuring = false;
    const timed = async (into: number[], f: () => Promise<Reply>) => {
      const t0 = performance.now();
      const r = await f().catch(() => undefined);
      if (!r || r.status !== 200) result.errors++;
      else if (measuring) into.push(performance.now() - t0);
    };
    const heartbeatGapMs = HEARTBEAT_INTERVAL_MS / Math.max(1, sidecars);
    let next = 0;
    timers.push(setInterval(() => void timed(result.heartbeatMs, () => send(callAgent, base, "POST", `/meshes/default/dataplanes/dp-${next++ % sidecars}/_heartbeat`, {}, "{}")), Math.max(1, heartbeatGapMs)));
    timers.push(setInterval(() => void timed(result.getMs, () => send(callAgent, base, "GET", `/meshes/default/meshtrafficpermissions?size=100&offset=${100 * Math.floor(Math.random() * 5)}`)), 1000 / opts.getsPerSecond));
    // Writes: one MeshTrafficPermission edited in place at a fixed rate, so its 1 000-waiter collection wakes.
    let generation = 0;
    const write = () => {
      const doc: Record<string, unknown> = { ...(policyDoc(0, 0) as Record<string, unknown>), labels: { "bench/generation": String(++generation) } };
      return send(callAgent, base, "PUT", `/meshes/default/meshtrafficpermissions/${String(doc.name)}`, {}, JSON.stringify(doc));
    };
    if (opts.writesPerSecond > 0) {
      timers.push(setInterval(() => void write().then((r) => (r.status === 200 ? result.writes++ : result.errors++), () => result.errors++), 1000 / opts.writesPerSecond));
    }
    await sleep(1000); // warm-up
    measuring = true;
    const cpu0 = cpuMicros(child.pid!);
    const t0 = performance.now();
    await sleep(opts.durationS * 1000);
    result.cpuCores = (cpuMicros(child.pid!) - cpu0) / ((performance.now() - t0) * 1000);
    measuring = false;
    for (const t of timers) clearInterval(t);
    result.serverHeartbeatMaxMs = await serverHeartbeatMaxMs(callAgent, base).catch(() => NaN);
    stopping = true;
  } finally {
    stopping = true;
    await stopChild(child);
    pollAgent.destroy();
    callAgent.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return result;
}

export async function benchControlPlaneScale(opts: ControlPlaneScaleOptions, progress: (msg: string) => void): Promise<{ header: string[]; table: string[][]; rows: BenchRow[] }> {
  const header = ["sidecars", "long-polls held", "heartbeats/s", "writes", "heartbeat p50 ms", "heartbeat p99 ms", "heartbeat max ms", "CP-side heartbeat max ≤ ms", "GET p99 ms", "GET max ms", "control plane CPU (cores)", "errors"];
  const table: string[][] = [];
  const rows: BenchRow[] = [];
  for (const n of opts.sidecars) {
    progress(`control plane scale: ${n} sidecars, heartbeats only (baseline)`);
    const base = await run(n, false, opts);
    progress(`control plane scale: ${n} sidecars holding ${n * POLICY_TYPES.length} long-polls`);
    const held = await run(n, true, opts);
    for (const [what, r] of [["baseline (no long-polls)", base], [`${n * POLICY_TYPES.length}`, held]] as const) {
      const hb = summarize(r.heartbeatMs);
      const get = summarize(r.getMs);
      table.push([String(n), what, (1000 / (HEARTBEAT_INTERVAL_MS / n)).toFixed(0), String(r.writes), hb.p50.toFixed(1), hb.p99.toFixed(1), maxOf(r.heartbeatMs).toFixed(1), String(r.serverHeartbeatMaxMs), get.p99.toFixed(1), maxOf(r.getMs).toFixed(1), r.cpuCores.toFixed(3), String(r.errors)]);
    }
    const hbP99 = summarize(held.heartbeatMs).p99;
    const hbBase = summarize(base.heartbeatMs).p99;
    const getP99 = summarize(held.getMs).p99;
    const getBase = summarize(base.getMs).p99;
    const goal = n >= 1000;
    rows.push({ name: `heartbeat p99, ${n} sidecars long-polling`, value: hbP99, unit: "ms", baseline: hbBase, ratio: hbP99 / hbBase, ...(goal ? { goal: "≤ 20 ms (issue 14)" } : {}) });
    rows.push({ name: `unrelated GET p99, ${n} sidecars long-polling`, value: getP99, unit: "ms", baseline: getBase, ratio: getP99 / getBase });
    const maxGoal = goal ? { goal: "≤ 50 ms (issue 28)" } : {};
    for (const [what, held_, base_] of [["heartbeat", held.heartbeatMs, base.heartbeatMs], ["unrelated GET", held.getMs, base.getMs]] as const) {
      rows.push({ name: `${what} max, ${n} sidecars long-polling, ${opts.writesPerSecond} write/s`, value: maxOf(held_), unit: "ms", baseline: maxOf(base_), ratio: maxOf(held_) / maxOf(base_), ...maxGoal });
    }
    rows.push({ name: `control plane CPU, ${n} sidecars long-polling`, value: held.cpuCores, unit: "cores", baseline: base.cpuCores, ratio: held.cpuCores / base.cpuCores, ...(goal ? { goal: "≤ 0.5 cores (issue 14: below half a core)" } : {}) });
  }
  return { header, table, rows };
}

function maxOf(values: number[]): number {
  return values.reduce((a, b) => Math.max(a, b), 0);
}

/** Notes for the section, shared by bench/run.ts and the standalone run. */
export function controlPlaneScaleNotes(opts: ControlPlaneScaleOptions): string[] {
  return [
    `bench/control-plane-scale.ts: \`meshext control-plane\` (a child process pinned to CPU ${SERVER_CPU}) starts on a data directory holding ${opts.policies} policies (bench/policy-files.ts's mix over the four kinds) and N online Dataplanes. N simulated sidecars each hold one long-poll per policy kind (\`If-None-Match\` + \`?wait=${LONG_POLL_WAIT}\`, re-armed when answered, as extproc/policy-source/http-source.ts does) and heartbeat once per --heartbeat-interval (${HEARTBEAT_INTERVAL_MS / 1000} s default), spread evenly; ${opts.getsPerSecond} unrelated GETs/s read one 100-item page of the MeshTrafficPermission list; ${opts.writesPerSecond} PUT/s edits one MeshTrafficPermission in place (a new label each time), waking every sidecar's MeshTrafficPermission long-poll. ${opts.durationS} s measured after 1 s warm-up.`,
    "CP-side heartbeat max: the control plane's own latency histogram (arrival to reply), the bucket bound holding its slowest heartbeat — the client-side figures also hold the bench process's own stalls (it reads every woken long-poll's page).",
    "Baseline: the same heartbeats, GETs and writes with no long-poll held. CPU = utime+stime of the control plane over the window ÷ wall time.",
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const quick = process.argv.includes("--quick");
  const opts: ControlPlaneScaleOptions = { sidecars: process.argv.includes("--only-1000") ? [1000] : [100, 1000], policies: 2000, durationS: quick ? 10 : 20, getsPerSecond: 20, writesPerSecond: 1 };
  const t0 = Date.now();
  const out = await benchControlPlaneScale(opts, (m) => process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(0)}s] ${m}\n`));
  const { formatRows, formatTable } = await import("./report.js");
  console.log(controlPlaneScaleNotes(opts).join("\n"));
  console.log(formatTable(out.header, out.table));
  console.log(formatRows(out.rows));
  process.exit(0);
}

// What one policy edit costs a real sidecar that follows the embedded control plane: `meshext control-plane`
// on 10 000 MeshTrafficPermissions (100 selecting the sidecar's Dataplane) and `meshext sidecar --control-plane`
// through a proxy that counts the bytes the sidecar reads. Two paths on the same data: the per-dataplane set
// (`…/dataplanes/{name}/_policy-set`) and the full lists (the proxy hides the feature from `GET /`, as a Kuma
// control plane has none: every change re-reads every page of every kind). Per edit: sidecar CPU, bytes read,
// write → "policy set in force"; an edit of a policy that does not select the sidecar: did it wake? The baseline:
// a full reload (every policy changed) over the lists.
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { rmSync } from "node:fs";
import { SIDECAR_ENV } from "../extproc/config/runtime.js";
import { policy, type PolicySetBenchOptions, seedDataDir, send } from "./control-plane-policy-sets.js";
import { QUIET_MS, settledChange } from "./policy-change.js";
import { CLIENT_CPU, cpuMsBetween, cpuReading, type JsonLine, onJsonLines, SERVER_CPU, sleep, spawnPinned, stopChild, waitForLine } from "./proc.js";
import type { BenchRow } from "./report.js";
import { summarize } from "./stats.js";

export interface PolicyChangeCpOptions {
  policies: number;
  selecting: number;
  /** Measured edits per path (after WARMUP unmeasured ones). */
  edits: number;
}

const WARMUP = 3;
/** Full reloads on the lists path; the baseline is their median (one sample varied by the hour). */
const FULL_RELOADS = 3;

/** Node flags for the sidecars, from MESHEXT_BENCH_SIDECAR_NODE_FLAGS (say "--trace-gc" or "--cpu-prof --cpu-prof-dir=DIR"). */
const sidecarNodeFlags = () => (process.env.MESHEXT_BENCH_SIDECAR_NODE_FLAGS ?? "").split(" ").filter(Boolean);

/** A proxy in front of the control plane counting what it answers; `hideFeatures` answers `GET /` without them. */
export async function countingProxy(target: URL, hideFeatures: boolean) {
  const counts = { bytes: 0, answered200: 0 };
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const upstream = request({ agent, host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      if (hideFeatures && req.method === "GET" && req.url === "/") {
        const chunks: Buffer[] = [];
        up.on("data", (c: Buffer) => chunks.push(c));
        up.on("end", () => {
          const root = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
          delete root.features;
          const body = JSON.stringify(root);
          res.writeHead(up.statusCode ?? 502, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
        });
        return;
      }
      // Reads only: the heartbeats' PUTs are the same on both paths.
      const read = req.method === "GET";
      if (read && up.statusCode === 200) counts.answered200++;
      res.writeHead(up.statusCode ?? 502, up.headers);
      if (read) up.on("data", (c: Buffer) => (counts.bytes += c.length));
      up.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    close: () => (server.closeAllConnections(), agent.destroy(), new Promise<void>((r) => server.close(() => r()))),
  };
}

interface Edit {
  ms: number;
  cpuMs: number;
  bytes: number;
}

interface PathResult {
  selected: Edit[];
  /** Lists path: every policy changed at once (the control plane restarted on a new data directory), FULL_RELOADS times. */
  fullReloads: Edit[];
  /** Edits of a policy that does not select the sidecar: answers it got (200s) and "policy set in force" lines. */
  otherWoken: number[];
  otherCpuMs: number[];
  startMs: number;
}

export async function measurePath(kind: "set" | "lists", o: PolicyChangeCpOptions, progress: (m: string) => void): Promise<PathResult> {
  const so: PolicySetBenchOptions = { sidecars: 0, policies: o.policies, selecting: o.selecting, edits: o.edits, fullRereaders: 0 };
  const dataDirs = [seedDataDir(so)];
  const startCp = (dir: string, listen: string) => spawnPinned(CLIENT_CPU, process.execPath, ["dist/extproc/cli.js", "control-plane", "--listen", listen, "--data-dir", dir, "--log-level", "info"], SIDECAR_ENV);
  let cp = startCp(dataDirs[0]!, "127.0.0.1:0");
  let sidecar: ReturnType<typeof spawnPinned> | undefined;
  let proxy: Awaited<ReturnType<typeof countingProxy>> | undefined;
  const agent = new Agent({ keepAlive: true });
  try {
    const base = new URL(String((await waitForLine(cp, (l) => l.msg === "control plane listening", 60_000, "control plane start")).url));
    proxy = await countingProxy(base, kind === "lists");
    const t0 = Date.now();
    sidecar = spawnPinned(SERVER_CPU, process.execPath, [...sidecarNodeFlags(), "dist/extproc/cli.js", "sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--control-plane", proxy.url,
      "--dataplane-name", "dp-0", "--dataplane-tags", "kuma.io/service=svc-0,shard=s-0", "--log-level", "info", "--drain-min", "0", "--drain-time", "200"], SIDECAR_ENV);
    // With Node flags (--trace-gc, say), what the sidecar prints that is not a log line goes to stderr.
    if (sidecarNodeFlags().length > 0) sidecar.stdout!.on("data", (d: Buffer) => process.stderr.write(d.toString().split("\n").filter((l) => l && !l.startsWith("{")).map((l) => `[sidecar ${kind}] ${l}\n`).join("")));
    const lines: Array<{ at: number; line: JsonLine }> = [];
    onJsonLines(sidecar, (line) => lines.push({ at: Date.now(), line }));
    const inForce = () => lines.filter((l) => l.line.msg === "policy set in force");
    // Started: its policies in force from the path measured (the set is read once registered, so the lists may
    // come first; a set's total is what the control plane selected, the lists' is every policy).
    const startBy = Date.now() + 120_000;
    const fromPath = (total: unknown) => total === (kind === "set" ? o.selecting : o.policies);
    while (Date.now() < startBy && !inForce().some((l) => l.line.policies === o.selecting && fromPath(l.line.total))) await sleep(20);
    if (Date.now() >= startBy) throw new Error(`bench: the ${kind} sidecar never put its ${o.selecting} policies in force`);
    const startMs = inForce().at(-1)!.at - t0;
    await sleep(3000); // the start's garbage collected; heartbeats settled
    const pid = sidecar.pid!;
    let generation = 0;
    const put = (j: number) => send(agent, base, "PUT", `/meshes/default/meshtrafficpermissions/p-${j}`, {}, JSON.stringify(policy(j, so, ++generation)));
    /** The change's end (its last "policy set in force" after line `before`), its CPU and bytes read until then. */
    const settled = (before: number, timeoutMs: number) => settledChange(() => inForce().slice(before), () => ({ cpu: cpuReading(pid), bytes: proxy!.counts.bytes }), timeoutMs);
    const edit = async (j: number): Promise<Edit> => {
      const before = inForce().length;
      const cpu0 = cpuReading(pid);
      const bytes0 = proxy!.counts.bytes;
      const writeAt = Date.now();
      const r = await put(j);
      if (r.status !== 200 && r.status !== 201) throw new Error(`bench: PUT p-${j} answered ${r.status}`);
      const done = await settled(before, 60_000);
      if (!done) throw new Error(`bench: the edit of p-${j} never came into force at the ${kind} sidecar`);
      return { ms: done.at - writeAt, cpuMs: cpuMsBetween(cpu0, done.sample.cpu), bytes: done.sample.bytes - bytes0 };
    };
    const shards = o.policies / o.selecting;
    progress(`policy change over the control plane (${kind === "set" ? "per-dataplane set" : "full lists"}): ${WARMUP} + ${o.edits} edits`);
    const result: PathResult = { selected: [], fullReloads: [], otherWoken: [], otherCpuMs: [], startMs };
    for (let k = 0; k < WARMUP + o.edits; k++) {
      const e = await edit(shards * ((k % (o.selecting - 1)) + 1)); // policies 100, 200, …: shard 0, this sidecar's
      if (k >= WARMUP) result.selected.push(e);
      await sleep(300);
    }
    // Edits it is not selected by: policy 1, 101, … (shard 1). Counted over a second after the write.
    for (let k = 0; k < (kind === "set" ? o.edits : 0); k++) {
      const answered0 = proxy.counts.answered200;
      const forced0 = inForce().length;
      const cpu0 = cpuReading(pid);
      await put(1 + shards * k);
      await sleep(1000);
      result.otherWoken.push(proxy.counts.answered200 - answered0 + (inForce().length - forced0));
      result.otherCpuMs.push(cpuMsBetween(cpu0, cpuReading(pid)));
    }
    if (kind === "lists") {
      // The full reload, FULL_RELOADS times: the control plane comes back on the same address with every policy
      // changed (a new label each time).
      for (let g = 1; g <= FULL_RELOADS; g++) {
        progress(`policy change over the control plane (full lists): every one of the ${o.policies} policies changed (${g} of ${FULL_RELOADS})`);
        dataDirs.push(seedDataDir(so, g));
        const before = inForce().length;
        const cpu0 = cpuReading(pid);
        await stopChild(cp);
        const restartAt = Date.now();
        cp = startCp(dataDirs[g]!, base.host);
        await waitForLine(cp, (l) => l.msg === "control plane listening", 60_000, "control plane restart");
        const done = await settled(before, 120_000);
        if (!done) throw new Error("bench: the lists sidecar never put the changed set in force");
        result.fullReloads.push({ ms: done.at - restartAt, cpuMs: cpuMsBetween(cpu0, done.sample.cpu), bytes: NaN });
        await sleep(1000); // the reload's garbage collected before the next
      }
    }
    return result;
  } finally {
    if (sidecar) await stopChild(sidecar);
    await proxy?.close();
    await stopChild(cp);
    agent.destroy();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => summarize(xs).p50;
const maxOf = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), 0);

export async function benchPolicyChangeCp(o: PolicyChangeCpOptions, progress: (msg: string) => void): Promise<BenchRow[]> {
  const lists = await measurePath("lists", o, progress);
  const set = await measurePath("set", o, progress);
  const what = `one of ${o.policies} policies edited, ${o.selecting} selecting the sidecar`;
  const cpu = { set: median(set.selected.map((e) => e.cpuMs)), lists: median(lists.selected.map((e) => e.cpuMs)) };
  const bytes = { set: median(set.selected.map((e) => e.bytes)), lists: median(lists.selected.map((e) => e.bytes)) };
  const ms = { set: median(set.selected.map((e) => e.ms)), lists: median(lists.selected.map((e) => e.ms)) };
  const full = { ms: median(lists.fullReloads.map((e) => e.ms)), cpuMs: median(lists.fullReloads.map((e) => e.cpuMs)) };
  return [
    { name: `${what}: sidecar CPU per edit, per-dataplane set (vs the full reload's), median of ${o.edits}`, value: cpu.set, unit: "ms", baseline: full.cpuMs, ratio: cpu.set / full.cpuMs, goal: "ratio ≤ 0.01" },
    { name: `${what}: sidecar CPU per edit, full lists (vs the full reload's), median of ${o.edits}`, value: cpu.lists, unit: "ms", baseline: full.cpuMs, ratio: cpu.lists / full.cpuMs },
    { name: `${what}: bytes read by the sidecar per edit, per-dataplane set (vs full lists)`, value: bytes.set, unit: "bytes", baseline: bytes.lists, ratio: bytes.set / bytes.lists },
    { name: `${what}: write → in force, per-dataplane set (vs full lists), median`, value: ms.set, unit: "ms", baseline: ms.lists, ratio: ms.set / ms.lists },
    { name: `${what}: write → in force, per-dataplane set, slowest of ${o.edits} (p99 bound)`, value: maxOf(set.selected.map((e) => e.ms)), unit: "ms", goal: "≤ 100" },
    { name: `${what}: write → in force, full lists, slowest of ${o.edits}`, value: maxOf(lists.selected.map((e) => e.ms)), unit: "ms" },
    { name: `edit of a policy not selecting the sidecar, per-dataplane set: answers or sets in force it caused, most of ${o.edits}`, value: maxOf(set.otherWoken), unit: "wakes", goal: "= 0" },
    { name: `edit of a policy not selecting the sidecar, per-dataplane set: sidecar CPU in the second after it, median (heartbeats, timers)`, value: median(set.otherCpuMs), unit: "ms" },
    { name: `full reload over the full lists: all ${o.policies} policies changed (control plane restarted on them), restart → in force (the sidecar's retry backoff included), median of ${FULL_RELOADS}`, value: full.ms, unit: "ms" },
    { name: `full reload over the full lists: sidecar CPU, median of ${FULL_RELOADS}`, value: full.cpuMs, unit: "ms" },
    { name: `sidecar start → its ${o.selecting} policies in force, per-dataplane set (vs full lists)`, value: set.startMs, unit: "ms", baseline: lists.startMs, ratio: set.startMs / lists.startMs },
  ];
}

export function policyChangeCpNotes(o: PolicyChangeCpOptions): string[] {
  return [
    `bench/policy-change-cp.ts: \`meshext control-plane\` (pinned to CPU 1) on ${o.policies} MeshTrafficPermissions; policy j selects the Dataplanes whose \`shard\` tag is j mod ${o.policies / o.selecting}, so ${o.selecting} select the sidecar's. \`meshext sidecar --control-plane\` (pinned to CPU 0, registered as that Dataplane) reads it through a proxy in the bench process that counts the bytes it answers. Per-dataplane set: the sidecar finds \`features\` in \`GET /\` and long-polls its own set. Full lists: the proxy answers \`GET /\` without \`features\`, as a Kuma control plane does, so the sidecar long-polls every kind's list and re-reads every page when one changes (today's path against Kuma). ${WARMUP} unmeasured then ${o.edits} measured PUTs of a policy selecting the sidecar, one at a time: write → the last "policy set in force" line (none for ${QUIET_MS} ms after it), sidecar CPU over that time (its threads' schedstat), bytes the proxy answered it meanwhile. Then ${o.edits} PUTs of a policy that does not select it (set path): 200 answers to its reads and sets it put in force within 1 s. The full reload, baseline of the CPU ratios: on the lists path, the control plane is stopped and started again on the same address on a data directory where every policy changed (a new label), and the sidecar re-reads, validates and applies all ${o.policies}: its CPU from the stop to that set in force. This is done ${FULL_RELOADS} times (a new label each time, 1 s apart) and the baseline is the median of the ${FULL_RELOADS} reloads' CPU.`,
  ];
}

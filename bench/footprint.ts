// Item 6: what one sidecar costs per pod. A scale table (idle RSS and set-swap time at growing mesh sizes with
// the same policies selecting this dataplane) against the echo server's idle RSS, and a soak: a long
// request run with a policy-set change every chunk, RSS sampled throughout, echo and sidecar interleaved.
import { RUNTIME_SETTINGS_ENV, SIDECAR_ENV, SIDECAR_NODE_FLAGS } from "../extproc/config/runtime.js";
import { runH2load } from "./h2load.js";
import { policyFiles, replacePolicyFiles } from "./policy-files.js";
import { CpuWindow, rssMiB, sleep } from "./proc.js";
import { type BenchRow, fmt } from "./report.js";
import { type ServerProc, startEcho, startSidecarProc } from "./servers.js";
import { median } from "./stats.js";

export interface FootprintOptions {
  /** Mesh sizes of the scale table. */
  sizes: number[];
  /** Policies of each size that select the bench sidecar. */
  selecting: number;
  /** Wait after start ("in force" for a sidecar) before idle RSS is read, echo and sidecars alike (see proc.ts IDLE_SETTLE_MS). */
  settleMs: number;
  /** Then CPU is read over this window, and idle RSS at its end (see readIdle). */
  idleWindowMs: number;
  soak: { requests: number; changeEvery: number; inFlight: number; policies: number };
  /** The shipped runtime settings against the defaults and against shipped without each Node flag: interleaved h2load runs on a 10 000-policy sidecar. */
  runtime: { inFlight: number; durationS: number; reps: number };
}

export interface FootprintResult {
  tables: Array<{ header: string[]; rows: string[][] }>;
  rows: BenchRow[];
}

interface IdleReading {
  /** RSS at the end of the settle wait, MiB. */
  settledRss: number;
  /** RSS at the end of the idle window, MiB: what the goal compares. */
  idleRss: number;
  /** CPU over the window, ms per second (= ‰ of one core). */
  idleCpu: number;
}

/**
 * RSS now, then CPU over `windowMs` and RSS at its end: the same reading for the echo and every sidecar. The window
 * is long enough for 10 ms clock ticks to add up, and for V8's memory reducer to have had a second chance: it runs
 * 8 s after the last full GC if the process is allocating little then, and otherwise tries again 8 s later. Until
 * it runs, the young generation V8 grew to during start-up and the load stays resident (8 MiB with the shipped
 * 4 MiB semi-spaces).
 */
async function readIdle(pid: number, windowMs: number): Promise<IdleReading> {
  const settledRss = rssMiB(pid);
  const window = new CpuWindow([pid]);
  await sleep(windowMs);
  const idleCpu = window.end().micros[0]! / windowMs;
  return { settledRss, idleRss: rssMiB(pid), idleCpu };
}

const inForceLines = (s: ServerProc, total: number, after: number) => s.lines.filter((l) => l.line.msg === "policy set in force" && l.line.total === total && l.at >= after);

/** Writes generation `generation` of an n-policy set into the sidecar's directory; ms until it is in force. */
async function swapSet(s: ServerProc, texts: string[], n: number): Promise<number> {
  const writeAt = Date.now();
  replacePolicyFiles(s.dir!, texts);
  const writtenAt = Date.now();
  for (let waited = 0; waited < 600_000; waited += 20) {
    const line = inForceLines(s, n, writtenAt)[0];
    if (line) return line.at - writeAt;
    await sleep(20);
  }
  return NaN;
}

export async function benchFootprint(o: FootprintOptions, progress: (msg: string) => void): Promise<FootprintResult> {
  const rows: BenchRow[] = [];
  const scale: string[][] = [];
  const echo = await startEcho();
  let echoIdle: IdleReading;
  try {
    await sleep(o.settleMs);
    echoIdle = await readIdle(echo.pid, o.idleWindowMs);
  } finally {
    await echo.stop();
  }
  for (const n of o.sizes) {
    progress(`footprint: ${n} mesh policies, ${o.selecting} selecting`);
    const s = await startSidecarProc({ policies: n, selecting: o.selecting, maxStreamsPerConnection: 0 });
    try {
      await sleep(o.settleMs);
      const { settledRss, idleRss: idle, idleCpu } = await readIdle(s.pid, o.idleWindowMs);
      const kept = Number(inForceLines(s, n, 0).at(-1)?.line.policies);
      const next = policyFiles(n, 1, o.selecting);
      let swapPeak = idle;
      const poll = setInterval(() => (swapPeak = Math.max(swapPeak, rssMiB(s.pid))), 50);
      const swapMs = await swapSet(s, next, n).finally(() => clearInterval(poll));
      await sleep(o.settleMs);
      const afterSwap = rssMiB(s.pid);
      scale.push([String(n), String(kept), fmt(settledRss), fmt(idle), fmt(idle / echoIdle.idleRss, 2), fmt(idleCpu, 2), fmt(swapPeak), fmt(afterSwap), fmt(swapMs, 0)]);
      rows.push({ name: `sidecar idle, ${n} mesh policies, ${kept} selecting (vs idle echo)`, value: idle, unit: "MiB RSS", baseline: echoIdle.idleRss, ratio: idle / echoIdle.idleRss, ...(n === 10_000 ? { goal: "ratio ≤ 1.2" } : {}) });
      rows.push({ name: `sidecar RSS ${o.settleMs / 1000} s after the load, ${n} mesh policies (vs echo ${o.settleMs / 1000} s after start)`, value: settledRss, unit: "MiB RSS", baseline: echoIdle.settledRss, ratio: settledRss / echoIdle.settledRss });
      rows.push({ name: `sidecar idle CPU, ${n} mesh policies (vs idle echo)`, value: idleCpu, unit: "ms CPU/s", baseline: echoIdle.idleCpu, ratio: echoIdle.idleCpu > 0 ? idleCpu / echoIdle.idleCpu : undefined });
      rows.push({ name: `policy set swap, ${n} mesh policies (write → in force, no load)`, value: swapMs, unit: "ms" });
    } finally {
      await s.stop();
    }
  }
  const soak = await soakRun(o.soak, progress);
  const runtime = await runtimeEffect(o.runtime, o.settleMs + o.idleWindowMs, progress);
  return {
    tables: [
      { header: ["sidecar runtime settings", `idle RSS MiB (${(o.settleMs + o.idleWindowMs) / 1000} s after start)`, `idle RSS MiB (${(o.settleMs + o.idleWindowMs) / 1000} s after the traffic)`, "peak RSS MiB", "req/s", "server CPU µs/req", "p99 ms"], rows: runtime.table },
      { header: ["mesh policies", "kept (select this dataplane)", `RSS ${o.settleMs / 1000} s after the load MiB (echo: ${fmt(echoIdle.settledRss)})`, `idle RSS MiB (${(o.settleMs + o.idleWindowMs) / 1000} s; echo: ${fmt(echoIdle.idleRss)})`, "÷ idle echo", "idle CPU ms/s (echo: " + fmt(echoIdle.idleCpu, 2) + ")", "RSS peak during the swap MiB", "RSS after the swap MiB", "swap write → in force ms"], rows: scale },
      { header: ["after requests", "echo RSS MiB", "sidecar RSS MiB", "sidecar RSS peak in chunk MiB", "sidecar policy set"], rows: soak.table },
    ],
    rows: [...rows, ...soak.rows, ...runtime.rows],
  };
}

async function soakRun(o: FootprintOptions["soak"], progress: (msg: string) => void): Promise<{ table: string[][]; rows: BenchRow[] }> {
  const echo = await startEcho();
  const side = await startSidecarProc({ policies: o.policies, maxStreamsPerConnection: 0 });
  const table: string[][] = [];
  const after: Array<{ done: number; echo: number; sidecar: number }> = [];
  let failed = 0;
  try {
    for (let done = 0, generation = 0; done < o.requests; ) {
      const chunk = Math.min(o.changeEvery, o.requests - done);
      progress(`soak: requests ${done + 1}–${done + chunk} of ${o.requests}`);
      const e = await runH2load(echo.grpc, o.inFlight, { requests: chunk });
      let peak = 0;
      const poll = setInterval(() => (peak = Math.max(peak, rssMiB(side.pid))), 250);
      const r = await runH2load(side.grpc, o.inFlight, { requests: chunk }).finally(() => clearInterval(poll));
      failed += e.failed + r.failed;
      done += chunk;
      const point = { done, echo: rssMiB(echo.pid), sidecar: rssMiB(side.pid) };
      after.push(point);
      let set = `generation ${generation}`;
      if (done < o.requests) {
        generation++;
        const ms = await swapSet(side, policyFiles(o.policies, generation), o.policies);
        set += ` → ${generation} (${fmt(ms, 0)} ms)`;
      }
      table.push([String(done), fmt(point.echo), fmt(point.sidecar), fmt(Math.max(peak, point.sidecar)), set]);
    }
  } finally {
    await side.stop();
    await echo.stop();
  }
  // The goal compares RSS after the first fifth of the run with RSS at its end (the last fifth run).
  const fifth = o.requests / 5;
  const early = after.find((a) => a.done >= fifth) ?? after[0]!;
  const last = after.at(-1)!;
  const what = `${o.requests} requests, ${o.inFlight} in flight, set of ${o.policies} changed every ${o.changeEvery}`;
  return {
    table,
    rows: [
      { name: `soak RSS after the last ${fifth} vs after the first ${fifth} requests, sidecar (${what})`, value: last.sidecar, unit: "MiB RSS", baseline: early.sidecar, ratio: last.sidecar / early.sidecar, goal: "ratio ≤ 1.1" },
      { name: `soak RSS after the last ${fifth} vs after the first ${fifth} requests, echo (same requests)`, value: last.echo, unit: "MiB RSS", baseline: early.echo, ratio: last.echo / early.echo, goal: "info" },
      { name: `soak sidecar RSS at the end vs echo`, value: last.sidecar, unit: "MiB RSS", baseline: last.echo, ratio: last.sidecar / last.echo },
      { name: `failed requests in the soak (echo and sidecar)`, value: failed, unit: "requests", goal: "= 0" },
    ],
  };
}

/** The shipped environment as `NAME=value` words. */
const SHIPPED = Object.entries(SIDECAR_ENV).map(([k, v]) => `${k}=${v}`).join(" ");

/** The shipped environment with one Node flag left out of NODE_OPTIONS (and the sidecar told not to add it back). */
function shippedWithout(flag: string): Record<string, string> {
  return { ...SIDECAR_ENV, NODE_OPTIONS: SIDECAR_NODE_FLAGS.filter((f) => f !== flag).join(" "), [RUNTIME_SETTINGS_ENV]: "off" };
}

/**
 * Effect of the shipped runtime settings: the same sidecar (10 000 policies) as shipped, with Node's and glibc's
 * defaults, and without each Node flag, interleaved. Idle RSS is read twice: after the start (as the scale table
 * reads it) and again `settleMs + idleWindowMs` after the last h2load run, once traffic has grown the young
 * generation.
 */
async function runtimeEffect(o: FootprintOptions["runtime"], idleMs: number, progress: (msg: string) => void): Promise<{ table: string[][]; rows: BenchRow[] }> {
  const variants = [
    { label: `${SHIPPED} (shipped)`, short: "shipped", env: SIDECAR_ENV },
    { label: "Node and glibc defaults", short: "Node and glibc defaults", env: { [RUNTIME_SETTINGS_ENV]: "off" } },
    { label: "shipped without --max-semi-space-size=4", short: "without --max-semi-space-size=4", env: shippedWithout("--max-semi-space-size=4") },
    { label: "shipped without --expose-gc (no idle trim)", short: "without --expose-gc", env: shippedWithout("--expose-gc") },
  ];
  const procs: ServerProc[] = [];
  try {
    for (const v of variants) procs.push(await startSidecarProc({ policies: 10_000, env: v.env, maxStreamsPerConnection: 0 }));
    await sleep(idleMs);
    const results = procs.map((p) => ({ idle: rssMiB(p.pid), idleAfterTraffic: 0, peak: 0, rps: [] as number[], cpu: [] as number[], p99: [] as number[] }));
    for (let rep = 0; rep < o.reps; rep++) {
      for (const [i, p] of procs.entries()) {
        progress(`runtime options: ${variants[i]!.label}, rep ${rep + 1}/${o.reps}`);
        const r = results[i]!;
        const poll = setInterval(() => (r.peak = Math.max(r.peak, rssMiB(p.pid))), 250);
        const win = new CpuWindow([p.pid]);
        const h = await runH2load(p.grpc, o.inFlight, { durationS: o.durationS, warmupS: 0 }).finally(() => clearInterval(poll));
        r.rps.push(h.rps);
        r.cpu.push(win.end().micros[0]! / Math.max(1, h.ok));
        r.p99.push(h.latenciesMs[Math.floor(h.latenciesMs.length * 0.99)] ?? NaN);
      }
    }
    progress("runtime options: idle after the traffic");
    await sleep(idleMs);
    for (const [i, p] of procs.entries()) results[i]!.idleAfterTraffic = rssMiB(p.pid);
    const summary = results.map((r) => ({ idle: r.idle, idleAfterTraffic: r.idleAfterTraffic, peak: r.peak, rps: median(r.rps), cpu: median(r.cpu), p99: median(r.p99) }));
    const table = summary.map((r, i) => [variants[i]!.label, fmt(r.idle), fmt(r.idleAfterTraffic), fmt(r.peak), fmt(r.rps, 0), fmt(r.cpu, 0), fmt(r.p99, 2)]);
    const shipped = summary[0]!;
    const rows: BenchRow[] = [];
    for (const [i, other] of summary.entries()) {
      if (i === 0) continue;
      const what = `sidecar as shipped vs ${variants[i]!.short} (10000 policies, ${o.inFlight} in flight)`;
      rows.push(
        { name: `idle RSS, ${what}`, value: shipped.idle, unit: "MiB RSS", baseline: other.idle, ratio: shipped.idle / other.idle },
        { name: `idle RSS after the traffic, ${what}`, value: shipped.idleAfterTraffic, unit: "MiB RSS", baseline: other.idleAfterTraffic, ratio: shipped.idleAfterTraffic / other.idleAfterTraffic },
        { name: `peak RSS, ${what}`, value: shipped.peak, unit: "MiB RSS", baseline: other.peak, ratio: shipped.peak / other.peak },
        { name: `req/s, ${what}`, value: shipped.rps, unit: "req/s", baseline: other.rps, ratio: shipped.rps / other.rps },
        { name: `server CPU, ${what}`, value: shipped.cpu, unit: "µs/req", baseline: other.cpu, ratio: shipped.cpu / other.cpu },
      );
    }
    return { table, rows };
  } finally {
    for (const p of procs) await p.stop();
  }
}

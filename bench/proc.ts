// Child processes for the benches: pinned to a CPU with taskset, their CPU time and RSS from /proc,
// the machine's busy time (to tell what other tenants used), and waiting for a JSON log line.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { createInterface } from "node:readline";

export const SERVER_CPU = "0";
export const CLIENT_CPU = "1";
const HAVE_TASKSET = spawnSync("which", ["taskset"]).status === 0;
const TICKS_PER_SECOND = 100; // USER_HZ on Linux
const NCPU = cpus().length;

/** Spawns `cmd args` on `cpu` (taskset execs the command: the pid is the command's). */
export function spawnPinned(cpu: string, cmd: string, args: string[], env?: Readonly<Record<string, string>>): ChildProcess {
  const [c, a] = HAVE_TASKSET && NCPU > 1 ? ["taskset", ["-c", cpu, cmd, ...args]] : [cmd, args];
  return spawn(c, a, { stdio: ["ignore", "pipe", "pipe"], ...(env ? { env: { ...process.env, ...env } } : {}) });
}

export function pinningNote(): string {
  return HAVE_TASKSET && NCPU > 1 ? `servers on CPU ${SERVER_CPU}, load generators on CPU ${CLIENT_CPU} (taskset)` : "NOT pinned (no taskset or 1 CPU)";
}

/** utime+stime of a process, µs. */
export function cpuMicros(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1e6) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** A process's CPU so far, two ways: utime+stime (10 ms ticks, every thread that ever ran) and its live threads' run time (ns). */
export interface CpuReading {
  ticksMicros: number;
  liveThreadsNs: number;
}

export function cpuReading(pid: number): CpuReading {
  let liveThreadsNs = 0;
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        liveThreadsNs += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // the thread ended between the listing and the read: counted by the ticks
      }
    }
  } catch {
    // the process is gone
  }
  return { ticksMicros: cpuMicros(pid), liveThreadsNs };
}

/**
 * CPU used between two readings, ms: the live threads' run time (exact), plus what threads that ended in the
 * window used (a parse worker), seen only in the ticks: their excess over the live threads' time beyond one tick
 * of rounding (so up to 10 ms of an ended thread's time can go uncounted).
 */
export function cpuMsBetween(a: CpuReading, b: CpuReading): number {
  const liveMs = (b.liveThreadsNs - a.liveThreadsNs) / 1e6;
  const ticksMs = (b.ticksMicros - a.ticksMicros) / 1000;
  const tickMs = 1000 / TICKS_PER_SECOND;
  return liveMs + Math.max(0, ticksMs - liveMs - tickMs);
}

/**
 * How long a process sits unloaded before its RSS counts as idle: V8's memory reducer runs a compacting GC some
 * seconds after allocation stops (measured: echo 57.5 → 53.4 MiB, sidecar 72 → 66 MiB between 2 s and 10 s).
 */
export const IDLE_SETTLE_MS = 15_000;

/**
 * After the settle wait, how long the footprint bench reads an idle process's CPU before reading the RSS its
 * goal compares: a second chance for V8's memory reducer, which retries 8 s after a try that found the process
 * allocating (bench/footprint.ts readIdle).
 */
export const IDLE_WINDOW_MS = 15_000;

/** Resident set size, MiB. */
export function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Machine-wide busy and total time, in one-core µs. */
export function machineMicros(): { busy: number; total: number } {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((x, y) => x + y, 0);
  const idle = f[3]! + f[4]!;
  return { busy: ((total - idle) * 1e6) / TICKS_PER_SECOND, total: ((total * 1e6) / TICKS_PER_SECOND) / NCPU };
}

/** CPU (% of one core) used over a window by the machine minus the given processes' share. */
export class CpuWindow {
  private readonly m0 = machineMicros();
  private readonly p0: number[];
  constructor(private readonly pids: number[]) {
    this.p0 = pids.map(cpuMicros);
  }
  /** Per-process µs used, and what everything else on the box used (% of one core). */
  end(): { micros: number[]; otherPct: number; wallMicros: number } {
    const m1 = machineMicros();
    const micros = this.pids.map((p, i) => cpuMicros(p) - this.p0[i]!);
    const wall = m1.total - this.m0.total;
    const ours = micros.reduce((x, y) => x + y, 0);
    return { micros, otherPct: wall > 0 ? Math.max(0, ((m1.busy - this.m0.busy - ours) / wall) * 100) : 0, wallMicros: wall };
  }
}

export type JsonLine = Record<string, unknown>;

/** Calls `onLine` for each JSON object line the child prints on stdout. */
export function onJsonLines(child: ChildProcess, onLine: (line: JsonLine) => void): void {
  createInterface({ input: child.stdout! }).on("line", (text) => {
    if (!text.startsWith("{")) return;
    try {
      onLine(JSON.parse(text) as JsonLine);
    } catch {
      /* not JSON */
    }
  });
}

/** Resolves with the first JSON line matching `pred`, or rejects after timeoutMs / on exit. */
export function waitForLine(child: ChildProcess, pred: (l: JsonLine) => boolean, timeoutMs: number, what: string): Promise<JsonLine> {
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr = (stderr + String(d)).slice(-2000);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bench: timed out waiting for ${what}; stderr: ${stderr}`)), timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`bench: ${what}: process exited (${code}); stderr: ${stderr}`));
    });
    onJsonLines(child, (l) => {
      if (!pred(l)) return;
      clearTimeout(timer);
      resolve(l);
    });
  });
}

/** SIGTERM, then SIGKILL after graceMs; resolves on exit. */
export async function stopChild(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

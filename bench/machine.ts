// The machine a run came from (CPU, cores, Node, h2load, load average, commit), and waiting (bounded)
// for other tenants of a shared box to go quiet before a measurement.
import { execSync } from "node:child_process";
import { cpus, loadavg, totalmem } from "node:os";
import { machineMicros, sleep } from "./proc.js";

export interface MachineInfo {
  cpu: string;
  cores: number;
  memGiB: number;
  node: string;
  h2load: string;
  commit: string;
  loadAvgStart: number[];
}

function sh(cmd: string): string {
  try {
    return execSync(cmd, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "";
  }
}

export function machineInfo(): MachineInfo {
  const dirty = sh("git status --porcelain --untracked-files=no") ? " (working tree with uncommitted changes)" : "";
  return {
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    h2load: sh("h2load --version").split("\n")[0] || "not installed",
    commit: (sh("git rev-parse --short HEAD") || "unknown") + dirty,
    loadAvgStart: loadavg().map((x) => +x.toFixed(2)),
  };
}

export function loadAvgNow(): number[] {
  return loadavg().map((x) => +x.toFixed(2));
}

/** Waits until the whole machine used < quietPct of one core over a second, at most maxMs; returns that busy %. */
export async function waitQuiet(quietPct: number, maxMs: number): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    const a = machineMicros();
    await sleep(1000);
    const b = machineMicros();
    const busy = ((b.busy - a.busy) / (b.total - a.total)) * 100;
    if (busy <= quietPct || Date.now() - t0 >= maxMs) return busy;
  }
}

// The control-plane scale bench's child processes (simulated sidecars, the prober): forked with an IPC
// channel, optionally pinned to a CPU, waited on by message, and stopped.
import { type ChildProcess, fork, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { ChildArgs, FromChild, ToChild } from "./cp-scale-http.js";

export interface BenchChild {
  pid: number;
  /** Resolves with the next message matching `pred` (rejects if the child exits first or after timeoutMs). */
  next<T extends FromChild>(pred: (m: FromChild) => m is T, timeoutMs?: number): Promise<T>;
  /** Calls `on` for every message. */
  each(on: (m: FromChild) => void): void;
  tell(m: ToChild): void;
  stop(): Promise<void>;
}

/** Forks bench/`module`.js (a sibling of this file) with `args`; `cpu` pins it (taskset), `nice` sets its priority (renice). */
export async function forkBenchChild(module: string, args: ChildArgs, place: { cpu?: string; nice?: number } = {}): Promise<BenchChild> {
  const path = fileURLToPath(new URL(`./${module}.js`, import.meta.url));
  const child: ChildProcess = fork(path, [JSON.stringify(args)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const pid = child.pid!;
  if (place.cpu !== undefined) spawnSync("taskset", ["-pc", place.cpu, String(pid)], { stdio: "ignore" });
  if (place.nice !== undefined) spawnSync("renice", ["-n", String(place.nice), "-p", String(pid)], { stdio: "ignore" });
  const handle: BenchChild = {
    pid,
    next(pred, timeoutMs = 120_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`bench: ${module} sent no expected message in ${timeoutMs} ms`)), timeoutMs);
        const onMessage = (m: FromChild) => pred(m) && done(undefined, m);
        const onExit = (code: number | null) => done(new Error(`bench: ${module} exited (${code})`));
        function done(err?: Error, m?: FromChild) {
          clearTimeout(timer);
          child.off("message", onMessage);
          child.off("exit", onExit);
          if (err) reject(err);
          else resolve(m as never);
        }
        child.on("message", onMessage);
        child.once("exit", onExit);
      });
    },
    each(on) {
      child.on("message", on);
    },
    tell(m) {
      if (child.connected) child.send(m);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      handle.tell({ type: "quit" });
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
  await handle.next((m): m is FromChild => m.type === "ready");
  return handle;
}

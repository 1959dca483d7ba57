// Runs this same command again as a child with the runtime settings it lacks (config/runtime.ts), because glibc
// and V8 read them only at process start. The parent only forwards signals and passes on the exit status; the
// child dies with it (it watches an IPC channel), so no meshext outlives its supervisor's kill.
import { spawn } from "node:child_process";
import { RUNTIME_SETTINGS_ENV, type MissingRuntimeSettings } from "./config/runtime.js";

const FORWARDED: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR2"];

/** Resolves with the child's exit code; a child killed by a signal kills this process with the same signal. */
export function relaunchWith(missing: MissingRuntimeSettings, scriptAndArgs: readonly string[]): Promise<number> {
  // Its own process group: a terminal's Ctrl-C reaches the child once (forwarded), not twice (the drain counts signals).
  const child = spawn(process.execPath, [...missing.nodeFlags, ...process.execArgv, ...scriptAndArgs], {
    stdio: ["inherit", "inherit", "inherit", "ipc"],
    detached: true,
    env: { ...process.env, ...missing.env, [RUNTIME_SETTINGS_ENV]: "applied" },
  });
  const forward = (signal: NodeJS.Signals) => void child.kill(signal);
  for (const signal of FORWARDED) process.on(signal, forward);
  return new Promise((resolve) => {
    child.on("error", (err) => {
      process.stderr.write(`meshext: cannot relaunch with the runtime settings: ${err.message} (${RUNTIME_SETTINGS_ENV}=off runs without them)\n`);
      resolve(1);
    });
    child.on("exit", (code, signal) => {
      for (const s of FORWARDED) process.off(s, forward);
      if (signal) process.kill(process.pid, signal);
      else resolve(code ?? 1);
    });
  });
}

/** In the relaunched child: exit at once when the parent is gone (killed with SIGKILL, say). */
export function dieWithRelaunchParent(): void {
  if (process.env[RUNTIME_SETTINGS_ENV] !== "applied" || !process.channel) return;
  process.channel.unref();
  process.on("disconnect", () => process.kill(process.pid, "SIGKILL"));
}

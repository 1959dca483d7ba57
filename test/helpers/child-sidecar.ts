// The real sidecar as a child process (`node dist/extproc/cli.js sidecar`) on fixed loopback ports, as in a pod:
// its own event loop, and a process a test can kill -9 and start again on the same ports.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { pollUntil } from "./poll-until.js";
import { freePort } from "./prometheus.js";
import { sidecarEnv } from "./sidecar-env.js";

const CLI = join(process.cwd(), "dist", "extproc", "cli.js");

/** Starts it with the shipped Envoy-facing timeouts (and `extraArgs`); resolves once its /ready answers 200. */
export async function startChildSidecar(grpcPort: number, adminPort: number, extraArgs: string[] = []): Promise<ChildProcess> {
  const args = [CLI, "sidecar", "--grpc-listen", `127.0.0.1:${grpcPort}`, "--admin-listen", `127.0.0.1:${adminPort}`, "--message-timeout", "200ms", "--max-message-timeout", "5s", ...extraArgs];
  // Started with the shipped runtime settings already in place, so the CLI does not relaunch itself: the pid a test
  // stops or kills is the sidecar's own.
  const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"], env: sidecarEnv() });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  // A child that exits (a port taken, a bad flag) ends the wait at once instead of after the whole timeout.
  let onExit: (code: number | null) => void = () => {};
  const exited = new Promise<never>((_, reject) => (onExit = (code) => reject(new Error(`the child sidecar exited (${code}) before /ready`))));
  exited.catch(() => {});
  child.once("exit", (code) => onExit(code));
  try {
    await Promise.race([pollUntil("the child sidecar's /ready", async () => (await fetch(`http://127.0.0.1:${adminPort}/ready`)).status, (s) => s === 200, 15_000), exited]);
  } catch (error) {
    child.kill("SIGKILL");
    throw new Error(`${(error as Error).message}\n${stderr}`);
  } finally {
    onExit = () => {};
  }
  return child;
}

/**
 * Starts it on two free ports, and on fresh ones if another process bound one first: freePort() lets its port go
 * again, so under load a parallel test can take it before the sidecar binds it ("address is already in use").
 */
export async function startChildSidecarOnFreePorts(extraArgs: string[] = []): Promise<{ child: ChildProcess; grpcPort: number; adminPort: number }> {
  for (let attempt = 1; ; attempt++) {
    const [grpcPort, adminPort] = [await freePort(), await freePort()];
    try {
      return { child: await startChildSidecar(grpcPort, adminPort, extraArgs), grpcPort, adminPort };
    } catch (error) {
      if (attempt >= 3 || !/already in use/.test((error as Error).message)) throw error;
    }
  }
}

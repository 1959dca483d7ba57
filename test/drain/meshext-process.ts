// Spawns the built `meshext` CLI for process-level drain tests and collects its JSON log lines.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const CLI_PATH = fileURLToPath(new URL("../../extproc/cli.js", import.meta.url));
export const FAKE_ENVOY_PATH = fileURLToPath(new URL("./fake-envoy-process.js", import.meta.url));

export type LogLine = Record<string, unknown> & { msg?: string; step?: string; fakeEnvoy?: string; atMs?: number };

export interface MeshextProcess {
  readonly child: ChildProcess;
  /** JSON lines from stdout, each stamped with the time it arrived (receivedAtMs). */
  readonly lines: (LogLine & { receivedAtMs: number })[];
  stderr(): string;
  waitForLine(pred: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine & { receivedAtMs: number }>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>;
}

export function spawnMeshext(args: string[]): MeshextProcess {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MESHEXT_")));
  return watchProcess(spawn(process.execPath, [CLI_PATH, ...args], { env, stdio: ["ignore", "pipe", "pipe"] }));
}

/** Collects the JSON lines and stderr of any child with piped stdout/stderr (a meshext or a stand-in). */
export function watchProcess(child: ChildProcess): MeshextProcess {
  const lines: (LogLine & { receivedAtMs: number })[] = [];
  const waiters = new Set<() => void>();
  let buffered = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      const text = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try {
        lines.push({ ...(JSON.parse(text) as LogLine), receivedAtMs: Date.now() });
      } catch {
        // not a JSON line
      }
    }
    for (const w of waiters) w();
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>((resolve) =>
    child.once("exit", (code, signal) => {
      resolve({ code, signal, atMs: Date.now() });
      for (const w of waiters) w();
    }),
  );
  return {
    child,
    lines,
    exited,
    stderr: () => stderr,
    waitForLine(pred, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find(pred);
          if (found) {
            cleanup();
            resolve(found);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            cleanup();
            reject(new Error(`meshext exited before the expected line; stderr: ${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no matching line within ${timeoutMs}ms; stderr: ${stderr}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** The admin base URL from the "listening" line. */
export async function adminUrl(p: MeshextProcess): Promise<string> {
  const line = await p.waitForLine((l) => l.msg === "listening", 30_000);
  return `http://${String(line.admin)}`;
}

/** True once pid is gone (or a zombie waiting to be reaped). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

// The two servers under test as pinned child processes: the echo baseline and the meshext sidecar
// (N generated policies in a temp directory), with their pid, gRPC/admin addresses and log lines.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SIDECAR_ENV } from "../extproc/config/runtime.js";
import { writePolicyDir } from "./policy-files.js";
import { type JsonLine, onJsonLines, SERVER_CPU, spawnPinned, stopChild, waitForLine } from "./proc.js";

const DIST = join(process.cwd(), "dist");

export interface ServerProc {
  label: string;
  child: ChildProcess;
  pid: number;
  grpc: string;
  admin?: string;
  /** Policy directory (sidecar only). */
  dir?: string;
  /** Every JSON log line so far, with the local receive time (ms since epoch). */
  lines: Array<{ at: number; line: JsonLine }>;
  stop(): Promise<void>;
}

function track(child: ChildProcess): Array<{ at: number; line: JsonLine }> {
  const lines: Array<{ at: number; line: JsonLine }> = [];
  onJsonLines(child, (line) => lines.push({ at: Date.now(), line }));
  return lines;
}

/** Label of the echo on the sidecar's own transport (the grpc-js echo is "echo"). */
export const TRANSPORT_ECHO_LABEL = "echo, meshext transport";

/** The echo baseline on grpc-js, or on the sidecar's own gRPC server (`meshext`). */
export async function startEcho(transport: "grpc-js" | "meshext" = "grpc-js"): Promise<ServerProc> {
  const child = spawnPinned(SERVER_CPU, process.execPath, [join(DIST, "bench", "echo-server.js"), "--transport", transport]);
  const lines = track(child);
  const l = await waitForLine(child, (x) => x.msg === "listening", 10_000, "echo server");
  return { label: transport === "meshext" ? TRANSPORT_ECHO_LABEL : "echo", child, pid: child.pid!, grpc: String(l.grpc), lines, stop: () => stopChild(child) };
}

export interface SidecarOptions {
  policies: number;
  /** How many of them select the bench sidecar. @default 1 in 100 */
  selecting?: number;
  /** Environment added to the sidecar process. @default the shipped one (extproc/config/runtime.ts), as users start it */
  env?: Readonly<Record<string, string>>;
  maxStreamsPerConnection?: number;
  logLevel?: string;
  /** More sidecar flags. */
  extraArgs?: string[];
  /** Label override (default "sidecar, N policies"). */
  label?: string;
}

export async function startSidecarProc(opts: SidecarOptions): Promise<ServerProc> {
  const dir = mkdtempSync(join(tmpdir(), "meshext-bench-"));
  const policyDir = join(dir, "policies");
  writePolicyDir(policyDir, opts.policies, 0, opts.selecting);
  const args = [join(DIST, "extproc", "cli.js"), "sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
    "--policies", policyDir, "--dataplane-tags", "kuma.io/service=backend,version=v1", "--dataplane-name", "bench",
    "--log-level", opts.logLevel ?? "info", "--drain-min", "0", "--drain-time", "200", "--max-streams-per-connection", String(opts.maxStreamsPerConnection ?? 500), ...(opts.extraArgs ?? [])];
  const child = spawnPinned(SERVER_CPU, process.execPath, args, opts.env ?? SIDECAR_ENV);
  const lines = track(child);
  const inForce = waitForLine(child, (x) => x.msg === "policy set in force", 120_000, `sidecar with ${opts.policies} policies`);
  const l = await waitForLine(child, (x) => x.msg === "listening", 120_000, "sidecar");
  await inForce.catch(() => undefined);
  if (!lines.some((x) => x.line.msg === "policy set in force")) throw new Error(`bench: sidecar never put its ${opts.policies} policies in force`);
  return {
    label: opts.label ?? `sidecar, ${opts.policies} policies`, child, pid: child.pid!, grpc: String(l.grpc), admin: String(l.admin), dir: policyDir, lines,
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

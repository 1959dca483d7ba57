// Runs bench/load-client.ts as a pinned child process and returns its result.
import { join } from "node:path";
import type { LoadOptions, LoadResult } from "./envoy-load.js";
import { CLIENT_CPU, spawnPinned } from "./proc.js";

export interface LoadProcResult extends LoadResult {
  samples?: Array<[number, number, number]>;
}

export async function runLoadProc(opts: Omit<LoadOptions, "onRequest" | "headers"> & { samples?: boolean }): Promise<LoadProcResult> {
  const child = spawnPinned(CLIENT_CPU, process.execPath, [join(process.cwd(), "dist", "bench", "load-client.js"), JSON.stringify(opts)]);
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += String(d)));
  child.stderr!.on("data", (d) => (err = (err + String(d)).slice(-2000)));
  const code = await new Promise<number | null>((r) => child.once("exit", r));
  const line = out.trim().split("\n").pop() ?? "";
  if (code !== 0 || !line.startsWith("{")) throw new Error(`bench: load client failed (exit ${code}): ${err}`);
  return JSON.parse(line) as LoadProcResult;
}

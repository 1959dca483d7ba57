// h2load (nghttp2) as the load generator for the graceful pattern: one gRPC-framed request_headers
// ProcessingRequest per HTTP/2 stream with END_STREAM, -c 1 (one connection, like one Envoy worker),
// -m <in flight>; per-request latencies from its --log-file.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessingRequest } from "../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
import { realisticHeaders } from "./envoy-load.js";
import { CLIENT_CPU, spawnPinned } from "./proc.js";

export function haveH2load(): boolean {
  return spawnSync("which", ["h2load"]).status === 0;
}

/** Installs Debian's nghttp2-client when h2load is missing and we are root with apt-get (as scripts/test-deps.sh does). */
export function ensureH2load(log: (msg: string) => void): boolean {
  if (haveH2load()) return true;
  if (process.getuid?.() !== 0 || spawnSync("which", ["apt-get"]).status !== 0) {
    log("h2load missing (Debian nghttp2-client) and not root with apt-get: the throughput matrix falls back to the grpc-js client");
    return false;
  }
  log("installing nghttp2-client (h2load) with apt-get");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  spawnSync("apt-get", ["update", "-qq"], { stdio: "ignore", env });
  spawnSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "nghttp2-client"], { stdio: "ignore", env });
  return haveH2load();
}
const PATH = "/envoy.service.ext_proc.v3.ExternalProcessor/Process";

/** The gRPC frame (5-byte prefix + message) of Envoy's request_headers for realisticHeaders(i). */
export function requestFrame(i = 1): Buffer {
  const headers = realisticHeaders(i).map(([key, v]) => ({ key, value: "", rawValue: Buffer.from(v) }));
  const msg = Buffer.from(ProcessingRequest.encode({ request: { $case: "requestHeaders", requestHeaders: { headers: { headers }, attributes: {}, endOfStream: true } }, attributes: {}, observabilityMode: false } as ProcessingRequest).finish());
  const frame = Buffer.alloc(5 + msg.length);
  frame.writeUInt32BE(msg.length, 1);
  msg.copy(frame, 5);
  return frame;
}

export interface H2loadResult {
  ok: number;
  failed: number;
  /** Responses with a status other than 2xx (3xx, 4xx, 5xx). */
  non2xx: number;
  rps: number;
  /** [start ms since epoch, latency ms] per request, in end order. */
  samples: Array<[number, number]>;
  latenciesMs: number[];
}

/** How long h2load runs: warmupS + durationS (the result covers the measured part only), or a request count. */
export type H2loadLimit = { durationS: number; warmupS: number } | { requests: number };

/** Runs h2load against `target` until `limit`. */
export async function runH2load(target: string, inFlight: number, limit: H2loadLimit): Promise<H2loadResult> {
  const frameFile = join(tmpdir(), `meshext-bench-${process.pid}.grpcframe`);
  writeFileSync(frameFile, requestFrame());
  try {
    return await execH2load(["-c", "1", "-m", String(inFlight), ...("requests" in limit ? ["-n", String(limit.requests)] : ["-D", String(limit.durationS), `--warm-up-time=${limit.warmupS}`]),
      "-d", frameFile, "-H", "content-type: application/grpc", "-H", "te: trailers", `http://${target}${PATH}`]);
  } finally {
    rmSync(frameFile, { force: true });
  }
}

/** Runs h2load with `args` (load shape, headers, URL) pinned to the client CPU, with a per-request log; its summary and the 200s' latencies. */
export async function execH2load(args: string[]): Promise<H2loadResult> {
  const logFile = join(tmpdir(), `meshext-bench-${process.pid}.h2load.log`);
  rmSync(logFile, { force: true });
  const child = spawnPinned(CLIENT_CPU, "h2load", [...args, `--log-file=${logFile}`]);
  let out = "";
  child.stdout!.on("data", (d) => (out += String(d)));
  child.stderr!.on("data", (d) => (out += String(d)));
  const code = await new Promise<number | null>((r) => child.once("exit", r));
  const rq = /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out);
  const fin = /finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(out);
  const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  if (code !== 0 || !rq || !fin) throw new Error(`bench: h2load failed (exit ${code}): ${out.slice(-800)}`);
  const samples: Array<[number, number]> = readFileSync(logFile, "utf8").trim().split("\n").map((l) => l.split("\t"))
    .filter((f) => f[1] === "200").map((f) => [Number(f[0]) / 1000, Number(f[2]) / 1000]);
  rmSync(logFile, { force: true });
  return { ok: Number(rq[4]), failed: Number(rq[5]) + Number(rq[6]), non2xx: codes ? Number(codes[2]) + Number(codes[3]) + Number(codes[4]) : 0, rps: Number(fin[1]), samples, latenciesMs: samples.map((s) => s[1]).sort((a, b) => a - b) };
}

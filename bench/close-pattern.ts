// Item 2: Envoy's close patterns. The grpc-js Envoy emulator (a pinned child process) closes each stream
// either as Envoy does by default (END_STREAM + RST_STREAM) or gracefully (ext_proc_graceful_grpc_close:
// half-close, wait for OK); failed requests per 1 000 against echo and the sidecar (1 000 policies), with
// the sidecar's connection rotation (--max-streams-per-connection 500, its default) and without it.
import type { CloseMode } from "./envoy-load.js";
import { runLoadProc } from "./load-proc.js";
import { waitQuiet } from "./machine.js";
import { type BenchRow, fmt } from "./report.js";
import { type ServerProc, startEcho, startSidecarProc } from "./servers.js";
import { summarize } from "./stats.js";

export interface CloseOptions {
  requests: number;
  inFlight: number;
  policies: number;
  quietMaxMs: number;
  /** Full matrix: also echo with the graceful close and the sidecar with rotation off (what rotation prevents). */
  full: boolean;
}

interface Run {
  server: string;
  rotation: string;
  closeMode: CloseMode;
  failedPer1000: number;
  rps: number;
  p99: number;
  errors: Record<string, number>;
}

export interface CloseResult {
  header: string[];
  table: string[][];
  rows: BenchRow[];
}

const CLOSE_LABEL: Record<CloseMode, string> = { "envoy-default": "Envoy default (END_STREAM+RST)", graceful: "graceful (ext_proc_graceful_grpc_close)" };

export async function benchClosePattern(o: CloseOptions, progress: (msg: string) => void): Promise<CloseResult> {
  const setups: Array<{ start: () => Promise<ServerProc>; rotation: string; modes: CloseMode[] }> = [
    { start: startEcho, rotation: "none", modes: o.full ? ["envoy-default", "graceful"] : ["envoy-default"] },
    { start: () => startSidecarProc({ policies: o.policies }), rotation: "every 500 streams (default)", modes: ["envoy-default", "graceful"] },
  ];
  if (o.full) setups.push({ start: () => startSidecarProc({ policies: o.policies, maxStreamsPerConnection: 0 }), rotation: "off (0)", modes: ["envoy-default"] });
  const runs: Run[] = [];
  for (const setup of setups) {
    const s = await setup.start();
    try {
      for (const closeMode of setup.modes) {
        progress(`close pattern: ${s.label}, rotation ${setup.rotation}, ${closeMode}`);
        if (o.quietMaxMs > 0) await waitQuiet(50, o.quietMaxMs);
        const r = await runLoadProc({ target: s.grpc, inFlight: o.inFlight, requests: o.requests, closeMode });
        runs.push({ server: s.label, rotation: setup.rotation, closeMode, failedPer1000: (r.failed / o.requests) * 1000, rps: (r.ok / r.elapsedMs) * 1000, p99: summarize(r.latenciesMs).p99, errors: r.errors });
      }
    } finally {
      await s.stop();
    }
  }
  const header = ["server", "connection rotation", "close", `failed /1000 (of ${o.requests}, ${o.inFlight} in flight)`, "req/s", "p99 ms", "errors"];
  const table = runs.map((r) => [r.server, r.rotation, CLOSE_LABEL[r.closeMode], fmt(r.failedPer1000, 1), fmt(r.rps, 0), fmt(r.p99, 2), JSON.stringify(r.errors)]);
  const find = (server: string, rotation: string, mode: CloseMode) => runs.find((r) => r.server.startsWith(server) && r.rotation.startsWith(rotation) && r.closeMode === mode);
  const echoDefault = find("echo", "none", "envoy-default");
  const echoGraceful = find("echo", "none", "graceful");
  const rows: BenchRow[] = [];
  const add = (name: string, r: Run | undefined, base: Run | undefined, goal?: string) => {
    if (r) rows.push({ name, value: r.failedPer1000, unit: "failed/1000", baseline: base?.failedPer1000, goal });
  };
  add("failed, graceful close (documented Envoy config), sidecar (vs echo)", find("sidecar", "every", "graceful"), echoGraceful, "= 0");
  add("failed, Envoy default close, sidecar with rotation (vs echo)", find("sidecar", "every", "envoy-default"), echoDefault, "info (stated in README)");
  add("failed, Envoy default close, sidecar without rotation (vs echo)", find("sidecar", "off", "envoy-default"), echoDefault, "info");
  return { header, table, rows };
}

// Item 3: replacing 10 000 policies under load. A sidecar follows a policy directory holding 10 000
// policies while the Envoy emulator (graceful close, pinned child) runs; mid-run a new 10 000-policy set
// (every policy renamed and changed) is renamed into the directory. Measured: write → "policy set in
// force" (debounce + read + parse + validate + compile + swap), p99 of requests started during that
// window vs before it, and failed requests.
import { runLoadProc } from "./load-proc.js";
import { replacePolicyFiles, policyFiles } from "./policy-files.js";
import type { BenchRow } from "./report.js";
import { startSidecarProc } from "./servers.js";
import { sleep } from "./proc.js";
import { summarize } from "./stats.js";
import { DEBOUNCE_MS } from "../extproc/policy-source/dir-source.js";

export interface SwapOptions {
  policies: number;
  inFlight: number;
  durationMs: number;
  /** Time into the run when the new set is written. */
  swapAtMs: number;
  /** Requests started in the first warmupMs are not counted. */
  warmupMs: number;
}

export interface SwapResult {
  rows: BenchRow[];
  swapMs: number;
  requests: number;
}


export async function benchSwap(o: SwapOptions, progress: (msg: string) => void): Promise<SwapResult> {
  const s = await startSidecarProc({ policies: o.policies });
  try {
    const next = policyFiles(o.policies, 1); // prepared before the clock starts
    const versionsBefore = s.lines.filter((l) => l.line.msg === "policy set in force").length;
    progress(`swap: ${o.policies} policies replaced under ${o.inFlight} in flight`);
    const load = runLoadProc({ target: s.grpc, inFlight: o.inFlight, durationMs: o.durationMs, closeMode: "graceful", samples: true });
    await sleep(o.swapAtMs);
    const writeAt = Date.now();
    replacePolicyFiles(s.dir!, next);
    const writtenAt = Date.now();
    let inForceAt = NaN;
    for (let waited = 0; waited < 60_000; waited += 20) {
      const applied = s.lines.filter((l) => l.line.msg === "policy set in force").slice(versionsBefore);
      const full = applied.find((l) => l.line.total === o.policies && l.at >= writtenAt);
      if (full) {
        inForceAt = full.at;
        break;
      }
      await sleep(20);
    }
    const r = await load;
    const t0 = r.samples![0]?.[0] ?? 0;
    const measured = r.samples!.filter((x) => x[0] >= t0 + o.warmupMs);
    const before = measured.filter((x) => x[0] < writeAt && x[0] + x[1] < writeAt);
    const end = Number.isNaN(inForceAt) ? writeAt : inForceAt;
    const during = measured.filter((x) => x[0] <= end && x[0] + x[1] >= writeAt);
    const failed = r.samples!.filter((x) => x[2]).length;
    const p99Before = summarize(before.filter((x) => !x[2]).map((x) => x[1])).p99;
    const p99During = summarize(during.filter((x) => !x[2]).map((x) => x[1])).p99;
    const swapMs = inForceAt - writeAt;
    const rows: BenchRow[] = [
      { name: `policy swap: write → in force, ${o.policies} policies (incl. ${DEBOUNCE_MS} ms debounce)`, value: swapMs, unit: "ms" },
      { name: `p99 during the swap vs before (${during.length} vs ${before.length} requests, ${o.inFlight} in flight)`, value: p99During, unit: "ms", baseline: p99Before, ratio: p99During / p99Before, goal: "ratio ≤ 1.5" },
      { name: `failed requests during the swap run (${r.ok + r.failed} requests)`, value: failed, unit: "requests", goal: "= 0" },
    ];
    return { rows, swapMs, requests: r.ok + r.failed };
  } finally {
    await s.stop();
  }
}

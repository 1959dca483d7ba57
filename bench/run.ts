// `npm run bench [-- --quick] [-- --out BENCHMARKS.md]`: every benchmark, our figures next to their baselines
// as ratios, goal verdicts; --out also writes the same tables as markdown. Not part of `npm test`.
import { writeFileSync } from "node:fs";
import { benchClosePattern } from "./close-pattern.js";
import { benchDecisionLog, decisionLogOptions } from "./decision-log.js";
import { benchControlPlaneScale, controlPlaneScaleNotes } from "./control-plane-scale.js";
import { ensureH2load } from "./h2load.js";
import { loadAvgNow, machineInfo } from "./machine.js";
import { memoryRows } from "./memory.js";
import { benchPolicy } from "./policy.js";
import { pinningNote } from "./proc.js";
import { consoleText, markdown, type Section, type Summary } from "./summary.js";
import { benchSwap } from "./swap.js";
import { benchThroughput } from "./throughput.js";
import { benchWasm } from "./wasm.js";
import { median } from "./stats.js";

const quick = process.argv.includes("--quick");
const outIndex = process.argv.indexOf("--out");
const outFile = outIndex > 0 ? process.argv[outIndex + 1] : undefined;
const progress = (msg: string) => process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(0)}s] ${msg}\n`);
const t0 = Date.now();
const startedAt = new Date().toISOString();
const machine = machineInfo();
const generator = ensureH2load(progress) ? "h2load" : "grpc-js";

const THROUGHPUT = quick
  ? { inFlight: [64], policies: [1000, 10_000], durationS: 2, warmupS: 1, reps: 1, quietMaxMs: 0 }
  : { inFlight: [1, 16, 64], policies: [1, 1000, 10_000], durationS: 6, warmupS: 1, reps: 3, quietMaxMs: 2000 };
const CLOSE = quick
  ? { requests: 1500, inFlight: 64, policies: 1000, quietMaxMs: 0, full: false }
  : { requests: 6000, inFlight: 64, policies: 1000, quietMaxMs: 3000, full: true };
const SWAP = quick ? { policies: 10_000, inFlight: 16, durationMs: 5000, swapAtMs: 2500, warmupMs: 1000 } : { policies: 10_000, inFlight: 16, durationMs: 20_000, swapAtMs: 10_000, warmupMs: 2000 };

const CP_SCALE = { sidecars: [100, 1000], policies: 2000, durationS: quick ? 10 : 20, getsPerSecond: 20 };

const sections: Section[] = [];

const tp = await benchThroughput({ ...THROUGHPUT, generator }, progress);
sections.push({
  title: "1. ext_proc throughput and latency vs the transport limit",
  notes: [
    `Load: ${generator === "h2load" ? "h2load (`-c 1 -m <in flight>`: one HTTP/2 connection like one Envoy worker), one gRPC stream per request carrying Envoy's request_headers ProcessingRequest for a realistic request (12 headers incl. an XFCC with SPIFFE URIs, " + "values in raw_value) and END_STREAM" : "the grpc-js Envoy emulator (h2load missing), graceful close"}. Both servers answer request_headers with CONTINUE and response_header_mode SKIP (the request is allowed and no response edits apply), so Envoy would send no response_headers; both end the call right after the reply.`,
    "Baseline `echo`: bench/echo-server.ts, a bare grpc-js server with our ts-proto codecs and the sidecar's server options, no policy work. `sidecar, N policies`: `meshext sidecar --policies DIR` with N generated Kuma policies (bench/policy-files.ts: 1 MTP for backend allowing web; the rest on other services, every 100th on backend for another client), connection rotation off (h2load does not reconnect after GOAWAY; rotation is measured in section 2).",
    `Each server is a child process pinned to CPU 0, the load generator to CPU 1. ${THROUGHPUT.warmupS} s warm-up + ${THROUGHPUT.durationS} s measured, ${THROUGHPUT.reps} repetition(s) interleaving the servers; medians shown. Server CPU µs/request = utime+stime from /proc/<pid>/stat over the measured window ÷ requests completed. "other tenants" = machine busy time minus the server's, % of one core (includes the load generator).`,
  ],
  tables: [{ header: tp.header, rows: tp.table }],
  rows: tp.goals,
});

const cp = await benchClosePattern(CLOSE, progress);
sections.push({
  title: "2. Envoy's close pattern",
  notes: [
    "The grpc-js Envoy emulator (bench/envoy-load.ts in a child pinned to CPU 1, one HTTP/2 connection) sends request_headers on a new stream per request and closes it as Envoy does by default (END_STREAM then RST_STREAM after the reply) or gracefully, as Envoy does with the runtime flag `envoy.reloadable_features.ext_proc_graceful_grpc_close: true` (half-close, wait for the OK status) — the documented Envoy config.",
    "Node's HTTP/2 server answers more than ~1 000 RST_STREAMs on one connection (refill 33/s) with GOAWAY(INTERNAL_ERROR), failing the streams in flight; the sidecar's `--max-streams-per-connection` (default 500) asks Envoy to reconnect gracefully before that.",
  ],
  tables: [{ header: cp.header, rows: cp.table }],
  rows: cp.rows,
});

const sw = await benchSwap(SWAP, progress);
sections.push({
  title: "3. Policy changes under load",
  notes: [
    `A sidecar follows a directory holding ${SWAP.policies} policies while the Envoy emulator (graceful close, ${SWAP.inFlight} in flight) runs for ${SWAP.durationMs / 1000} s; at ${SWAP.swapAtMs / 1000} s a new ${SWAP.policies}-policy set (every policy renamed and changed) is renamed into the directory. Swap time = write → the sidecar's "policy set in force" log line (150 ms debounce + read + parse + validate + compile + atomic swap). "During" = requests in flight at any time in that window; "before" = requests finished before the write (after ${SWAP.warmupMs / 1000} s warm-up).`,
  ],
  tables: [],
  rows: sw.rows,
});

progress("wasm filter");
// Goals (wasm.ts): serving ≤ 1.25×, draining ≤ 1.5×, in each of three consecutive runs; release size ≤ 24 KiB.
const wasmRows = await benchWasm({ quick });
sections.push({
  title: "4. The wasm drain filter",
  notes: ["bench/wasm.ts: per-request cost (request headers → response headers → done) of build/meshext_drain.wasm in the proxy-wasm emulator against build/noop.wasm built with the same flags and ABI layer, alternating rounds, medians, three consecutive runs each reported; and the release .wasm size."],
  tables: [],
  rows: wasmRows,
});

progress("policy decisions");
const policyRows = await benchPolicy({ quick });
sections.push({
  title: "Policy decision cost (in process)",
  notes: ["bench/policy.ts: PolicyEngine.decide() per decision with 1, 100 and 10 000 policies, and compile time of each set (engine.replace) — the in-process share of the swap time above."],
  tables: [],
  rows: policyRows,
});

const DECISION_LOG = decisionLogOptions(quick, generator);
const dl = await benchDecisionLog(DECISION_LOG, progress);
sections.push({
  title: "Decision log cost",
  notes: [
    `Three sidecars with ${DECISION_LOG.policies} policies under the section-1 load (${generator}, ${DECISION_LOG.inFlight} in flight, every request allowed): \`--decision-log\` off, and on to a file with \`--decision-log-sample\` 0.01 and 1.0. ${DECISION_LOG.warmupS} s warm-up + ${DECISION_LOG.durationS} s measured, ${DECISION_LOG.reps} repetition(s) interleaving the three; medians. Lines dropped = lines the bounded buffer refused rather than slow the request path (meshext_decision_log_dropped_total).`,
  ],
  tables: [{ header: dl.header, rows: dl.table }],
  rows: dl.rows,
});

const cps = await benchControlPlaneScale(CP_SCALE, progress);
sections.push({
  title: "Control plane under many long-polling sidecars",
  notes: controlPlaneScaleNotes(CP_SCALE),
  tables: [{ header: cps.header, rows: cps.table }],
  rows: cps.rows,
});

sections.push({
  title: "5. Memory",
  notes: ["RSS (/proc/<pid>/status VmRSS) of the throughput bench's processes: 1 s after start with no traffic, and the peak sampled every 250 ms during the highest in-flight runs, against the echo server in the same state."],
  tables: [],
  rows: memoryRows(tp),
});

const summary: Summary = {
  mode: quick ? "quick" : "full",
  command: `npm run bench${quick ? " -- --quick" : ""}`,
  startedAt,
  durationS: (Date.now() - t0) / 1000,
  machine,
  loadAvgEnd: loadAvgNow(),
  otherTenantsPct: median(tp.cells.map((c) => c.otherPct)),
  pinning: pinningNote(),
  sections,
};
console.log(consoleText(summary));
if (outFile) {
  writeFileSync(outFile, markdown(summary));
  progress(`wrote ${outFile}`);
}
process.exit(0);

// The decision log's cost: requests/s of the same sidecar with --decision-log off, on with sampling 0.01 and on
// with sampling 1.0 (to a file), side by side, repetitions interleaved. Run alone: node dist/bench/decision-log.js [--quick]
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ensureH2load } from "./h2load.js";
import { type BenchRow, fmt, formatRows, formatTable } from "./report.js";
import { type ServerProc, startSidecarProc } from "./servers.js";
import { median, ratio } from "./stats.js";
import { benchDecisionLogInProcess } from "./decision-log-inproc.js";
import { measureOne, type ThroughputOptions } from "./throughput.js";

export interface DecisionLogBenchOptions {
  policies: number;
  inFlight: number;
  durationS: number;
  warmupS: number;
  reps: number;
  quietMaxMs: number;
  generator: ThroughputOptions["generator"];
}

export interface DecisionLogBenchResult {
  header: string[];
  table: string[][];
  rows: BenchRow[];
}

const VARIANTS = [
  { label: "decision log off", sample: undefined },
  { label: "decision log on, sample 0.01", sample: 0.01 },
  { label: "decision log on, sample 1.0", sample: 1 },
] as const;

async function metricSum(admin: string, name: string): Promise<number> {
  const text = await (await fetch(`http://${admin}/metrics`)).text();
  return text.split("\n").filter((l) => l.startsWith(name)).reduce((sum, l) => sum + Number(l.split(" ").pop()), 0);
}

export async function benchDecisionLog(o: DecisionLogBenchOptions, progress: (msg: string) => void): Promise<DecisionLogBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), "meshext-bench-decision-log-"));
  const servers: Array<{ s: ServerProc; file?: string }> = [];
  try {
    for (const v of VARIANTS) {
      const file = v.sample === undefined ? undefined : join(dir, `decisions-${v.sample}.log`);
      const extraArgs = file ? ["--decision-log", file, "--decision-log-sample", String(v.sample)] : [];
      // Connection rotation off, as in section 1 (h2load does not reconnect after GOAWAY).
      servers.push({ s: await startSidecarProc({ policies: o.policies, maxStreamsPerConnection: 0, extraArgs, label: v.label }), file });
    }
    const runs = new Map<string, Array<Awaited<ReturnType<typeof measureOne>>>>();
    for (let rep = 0; rep < o.reps; rep++) {
      // Each repetition starts with a different variant, so none always runs first after the quiet wait.
      for (const { s } of [...servers.slice(rep % servers.length), ...servers.slice(0, rep % servers.length)]) {
        progress(`decision log: ${s.label}, rep ${rep + 1}/${o.reps}`);
        runs.set(s.label, [...(runs.get(s.label) ?? []), await measureOne(s, o.inFlight, o)]);
      }
    }
    const cells = [];
    for (const { s, file } of servers) {
      const rs = runs.get(s.label)!;
      cells.push({
        label: s.label,
        rps: median(rs.map((x) => x.rps)),
        p99: median(rs.map((x) => x.p99)),
        cpuUsPerReq: median(rs.map((x) => x.cpuUsPerReq)),
        lines: file ? await metricSum(s.admin!, "meshext_decision_log_lines_total") : 0,
        dropped: file ? await metricSum(s.admin!, "meshext_decision_log_dropped_total") : 0,
        fileMiB: file ? statSync(file).size / 2 ** 20 : 0,
      });
    }
    const off = cells[0]!;
    const header = ["sidecar", "req/s", "p99 ms", "server CPU µs/req", "req/s ÷ off", "CPU ÷ off", "lines written", "lines dropped", "log MiB"];
    const table = cells.map((c) => [c.label, fmt(c.rps, 0), fmt(c.p99, 2), fmt(c.cpuUsPerReq, 0), fmt(ratio(c.rps, off.rps), 2), fmt(ratio(c.cpuUsPerReq, off.cpuUsPerReq), 2), String(c.lines), String(c.dropped), fmt(c.fileMiB, 1)]);
    const rows: BenchRow[] = cells.slice(1).map((c) => ({ name: `req/s, ${c.label} (vs off), ${o.inFlight} in flight`, value: c.rps, unit: "req/s", baseline: off.rps, ratio: ratio(c.rps, off.rps) }));
    rows.push(...(await benchDecisionLogInProcess({ quick: o.reps === 1, policies: o.policies })));
    return { header, table, rows };
  } finally {
    for (const { s } of servers) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function decisionLogOptions(quick: boolean, generator: ThroughputOptions["generator"]): DecisionLogBenchOptions {
  return quick
    ? { policies: 1000, inFlight: 64, durationS: 2, warmupS: 1, reps: 1, quietMaxMs: 0, generator }
    : { policies: 1000, inFlight: 64, durationS: 6, warmupS: 1, reps: 3, quietMaxMs: 2000, generator };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const progress = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
  const generator = ensureH2load(progress) ? "h2load" : "grpc-js";
  const result = await benchDecisionLog(decisionLogOptions(process.argv.includes("--quick"), generator), progress);
  console.log(formatTable(result.header, result.table));
  console.log(formatRows(result.rows));
  process.exit(0);
}

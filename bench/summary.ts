// The result of one `npm run bench`: sections of tables and BenchRows, rendered as the console text it
// prints and as BENCHMARKS.md, from the same data, so the file always matches what the run printed.
import type { MachineInfo } from "./machine.js";
import { type BenchRow, formatRows, formatTable, markdownRows, markdownTable, verdict } from "./report.js";

export interface Section {
  title: string;
  /** Method notes (markdown; printed as-is on the console too). */
  notes: string[];
  tables: Array<{ header: string[]; rows: string[][] }>;
  rows: BenchRow[];
}

export interface Summary {
  mode: "full" | "quick";
  command: string;
  startedAt: string;
  durationS: number;
  machine: MachineInfo;
  loadAvgEnd: number[];
  /** Median CPU other tenants used during the throughput runs, % of one core. */
  otherTenantsPct: number;
  pinning: string;
  sections: Section[];
}

function machineLines(s: Summary): string[] {
  const m = s.machine;
  return [
    `machine: ${m.cores} × ${m.cpu}, ${m.memGiB} GiB, Node ${m.node}, ${m.h2load}; commit ${m.commit}`,
    `run: ${s.mode}, started ${s.startedAt}, took ${s.durationS.toFixed(0)} s; ${s.pinning}`,
    `load average (1/5/15 min) at start ${m.loadAvgStart.join(" / ")}, at end ${s.loadAvgEnd.join(" / ")}${Number.isNaN(s.otherTenantsPct) ? "" : `; other tenants used a median ${s.otherTenantsPct.toFixed(0)} % of one core during the throughput runs`}`,
  ];
}

/** A caveat when other tenants used a noticeable share of the machine during the run. */
function noiseNote(s: Summary): string | undefined {
  if (s.otherTenantsPct < 30 && Math.max(...s.machine.loadAvgStart) < s.machine.cores) return undefined;
  return `Noisy run: the machine is shared, and other tenants (other engineers' builds and tests, plus our own load generator on CPU 1) kept ${Number.isNaN(s.otherTenantsPct) ? "some" : `${s.otherTenantsPct.toFixed(0)} %`} of one core busy with load average ${s.machine.loadAvgStart[0]} on ${s.machine.cores} cores. Absolute figures are depressed and vary between runs; the ratios compare runs interleaved under the same noise and are the figures to read.`;
}

export const HOW_TO_RUN = [
  "## How to run",
  "",
  "- `npm run bench` — full run (about 25 minutes on 2 cores, of which section 4b, through Envoy, is about 5; section 6, with its 1 000 000-request soak and 100 000-policy set, is about half of it); `npm run bench -- --quick` — one in-flight level, short runs, for development (under two minutes including the build on a quiet 2-core box); add `--out BENCHMARKS.md` to rewrite this file from the run. Not part of `npm test`.",
  "- Needs `h2load` (Debian `nghttp2-client`; installed with apt-get when run as root, else the matrix falls back to the grpc-js client) and `taskset` (util-linux) for pinning; results are only comparable with pinning on ≥ 2 cores.",
  "- Code: bench/run.ts (orchestration), throughput.ts, through-envoy.ts, close-pattern.ts, swap.ts, memory.ts, footprint.ts (scale table, soak, runtime options), echo-server.ts (baseline), h2load.ts, load-client.ts (grpc-js Envoy emulator in a child process), policy-files.ts, wasm.ts, policy.ts.",
  "",
];

function goals(s: Summary): BenchRow[] {
  return s.sections.flatMap((x) => x.rows).filter((r) => verdict(r) !== "");
}

export function consoleText(s: Summary): string {
  const note = noiseNote(s);
  const out = [`meshext benchmarks`, ...machineLines(s), ...(note ? [note] : []), ""];
  for (const sec of s.sections) {
    out.push(`== ${sec.title} ==`);
    for (const t of sec.tables) out.push(formatTable(t.header, t.rows), "");
    if (sec.rows.length) out.push(formatRows(sec.rows), "");
  }
  out.push("== goals ==", formatRows(goals(s)));
  return out.join("\n");
}

export function markdown(s: Summary): string {
  const out = [
    "# Benchmarks",
    "",
    `Latest figures from \`${s.command}\` (written by that run with \`--out BENCHMARKS.md\`; \`npm run bench\` prints the same tables).`,
    "",
    ...machineLines(s).map((l) => `- ${l}`),
    "",
    ...(noiseNote(s) ? [`**${noiseNote(s)}**`, ""] : []),
    "## Goals",
    "",
    markdownRows(goals(s)),
    "",
  ];
  for (const sec of s.sections) {
    out.push(`## ${sec.title}`, "", ...sec.notes.flatMap((n) => [n, ""]));
    for (const t of sec.tables) out.push(markdownTable(t.header, t.rows), "");
    if (sec.rows.length) out.push(markdownRows(sec.rows), "");
  }
  out.push(...HOW_TO_RUN);
  return out.join("\n");
}

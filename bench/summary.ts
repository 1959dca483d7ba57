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
    `load average (1/5/15 min) at start ${m.loadAvgStart.join(" / ")}, at end ${s.loadAvgEnd.join(" / ")}; other tenants used a median ${s.otherTenantsPct.toFixed(0)} % of one core during the throughput runs`,
  ];
}

function goals(s: Summary): BenchRow[] {
  return s.sections.flatMap((x) => x.rows).filter((r) => verdict(r) !== "");
}

export function consoleText(s: Summary): string {
  const out = [`meshext benchmarks`, ...machineLines(s), ""];
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
  return out.join("\n");
}

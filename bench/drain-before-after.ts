// The before/after picture of a scale-down (test/helpers/scale-down.ts, the harness of the scale-down test): failed
// requests per 10 000 when one of two instances leaves under load, for Envoy alone on a plain SIGTERM, Envoy alone
// with its own graceful /drain_listeners and --drain-time-s, and meshext (classic SIGTERM, native drain-forever).
import { envoyForTests } from "../test/helpers/real-envoy.js";
import { failedPer10k, runScaleDown, type LeaveSequence } from "../test/helpers/scale-down.js";
import type { BenchRow } from "./report.js";

export interface DrainBeforeAfterOptions {
  reps: number;
  /** Load before the signal (ms). */
  loadBeforeMs: number;
  /** Envoy's --drain-time-s for the drain_listeners row; meshext's --drain-min is the same. */
  drainS: number;
}

const ROWS: { sequence: LeaveSequence; label: string }[] = [
  { sequence: "envoy-sigterm", label: "Envoy alone, plain SIGTERM" },
  { sequence: "envoy-drain-listeners", label: "Envoy alone, POST /drain_listeners?graceful + --drain-time-s, then SIGTERM" },
  { sequence: "classic", label: "meshext run, classic (SIGTERM)" },
  { sequence: "native", label: "meshext run, native (drain --forever, then SIGTERM)" },
];

export async function benchDrainBeforeAfter(o: DrainBeforeAfterOptions, progress: (msg: string) => void): Promise<{ header: string[]; table: string[][]; rows: BenchRow[] } | undefined> {
  const envoy = envoyForTests();
  if (typeof envoy === "string") {
    progress(`drain before/after skipped: ${envoy}`);
    return undefined;
  }
  const totals = new Map<LeaveSequence, { sent: number; failed: number; per10k: number[]; kinds: Map<string, number>; exitMs: number[] }>();
  for (let rep = 0; rep < o.reps; rep++) {
    for (const row of ROWS) {
      progress(`drain before/after: ${row.label} (${rep + 1}/${o.reps})`);
      const r = await runScaleDown({ envoy, sequence: row.sequence, loadBeforeMs: o.loadBeforeMs, drainMinMs: o.drainS * 1000, envoyDrainTimeS: o.drainS });
      const t = totals.get(row.sequence) ?? { sent: 0, failed: 0, per10k: [] as number[], kinds: new Map<string, number>(), exitMs: [] as number[] };
      t.sent += r.requests.length;
      t.failed += r.failedRequests.length;
      t.per10k.push(failedPer10k(r));
      t.exitMs.push(r.exit.afterMs);
      for (const f of r.failedRequests) {
        const what = f.error ? f.error.replace(/\d+/g, "N") : `status ${f.status}`;
        t.kinds.set(what, (t.kinds.get(what) ?? 0) + 1);
      }
      totals.set(row.sequence, t);
    }
  }
  const header = ["leaving instance", "requests sent", "failed", "failed per 10 000", "gone after (s, median)", "how they failed"];
  const table = ROWS.map((row) => {
    const t = totals.get(row.sequence)!;
    const exit = [...t.exitMs].sort((a, b) => a - b)[Math.floor(t.exitMs.length / 2)]!;
    return [row.label, String(t.sent), String(t.failed), ((t.failed / Math.max(1, t.sent)) * 10_000).toFixed(1), (exit / 1000).toFixed(1), [...t.kinds].map(([k, n]) => `${n}× ${k}`).join("; ") || "—"];
  });
  const meshextFailed = (totals.get("classic")?.failed ?? 0) + (totals.get("native")?.failed ?? 0);
  const rows: BenchRow[] = [
    { name: "meshext scale-down: failed requests (classic + native)", value: meshextFailed, unit: "requests", goal: "= 0" },
  ];
  return { header, table, rows };
}

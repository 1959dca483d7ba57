// One benchmark result row, and a plain-text table printer shared by the benches.

export interface BenchRow {
  name: string;
  value: number;
  unit: string;
  /** The same measurement for the baseline, when there is one. */
  baseline?: number;
  /** value / baseline. */
  ratio?: number;
  /** Human-readable goal, e.g. "ratio ≤ 1.5". */
  goal?: string;
}

export function formatRows(rows: BenchRow[]): string {
  const fmt = (n: number | undefined, digits = 1) => (n === undefined ? "" : n.toFixed(digits));
  const table = [["bench", "value", "unit", "baseline", "ratio", "goal"],
    ...rows.map((r) => [r.name, fmt(r.value), r.unit, fmt(r.baseline), fmt(r.ratio, 2), r.goal ?? ""])];
  const widths = table[0]!.map((_, col) => Math.max(...table.map((row) => row[col]!.length)));
  return table.map((row) => row.map((cell, col) => cell.padEnd(widths[col]!)).join("  ").trimEnd()).join("\n");
}

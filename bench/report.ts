// One benchmark result row, goal verdicts, and the plain-text table printers shared by the benches.

export interface BenchRow {
  name: string;
  value: number;
  unit: string;
  /** The same measurement for the baseline, when there is one. */
  baseline?: number;
  /** value / baseline. */
  ratio?: number;
  /** Human-readable goal, e.g. "ratio ≤ 1.5", "ratio ≥ 0.8", "≤ 16 KiB", "= 0". */
  goal?: string;
}

/** "met" / "MISSED" for goals of the forms "ratio ≤|≥ X", "≤|≥|= X …" (on the value); "" otherwise. */
export function verdict(row: BenchRow): string {
  const m = /^(ratio )?(≤|≥|=) ?([\d.]+)/.exec(row.goal ?? "");
  if (!m) return "";
  const x = m[1] ? row.ratio : row.value;
  if (x === undefined || Number.isNaN(x)) return "n/a";
  const limit = Number(m[3]);
  const ok = m[2] === "≤" ? x <= limit : m[2] === "≥" ? x >= limit : x === limit;
  return ok ? "met" : "MISSED";
}

/** Left-aligned columns separated by two spaces. */
export function formatTable(header: string[], rows: string[][]): string {
  const table = [header, ...rows];
  const widths = header.map((_, col) => Math.max(...table.map((row) => (row[col] ?? "").length)));
  return table.map((row) => row.map((cell, col) => (cell ?? "").padEnd(widths[col]!)).join("  ").trimEnd()).join("\n");
}

/** The same table as GitHub markdown. */
export function markdownTable(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** Fixed digits, or "" for a missing value. */
export function fmt(n: number | undefined, digits = 1): string {
  return n === undefined || Number.isNaN(n) ? "" : n.toFixed(digits);
}

const ROW_HEADER = ["bench", "value", "unit", "baseline", "ratio", "goal", "verdict"];

function rowCells(r: BenchRow): string[] {
  return [r.name, fmt(r.value), r.unit, fmt(r.baseline), fmt(r.ratio, 2), r.goal ?? "", verdict(r)];
}

export function formatRows(rows: BenchRow[]): string {
  return formatTable(ROW_HEADER, rows.map(rowCells));
}

export function markdownRows(rows: BenchRow[]): string {
  return markdownTable(ROW_HEADER, rows.map(rowCells));
}

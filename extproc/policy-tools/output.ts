// Writing a tool's result: JSON or YAML as asked, else the command's readable text.
import { stringify } from "yaml";

export type OutputFormat = "table" | "json" | "yaml";

export function render(format: OutputFormat, value: unknown, text: () => string): string {
  if (format === "json") return JSON.stringify(value, null, 2) + "\n";
  if (format === "yaml") return stringify(value);
  return text();
}

/** Columns padded to their widest cell; the header row first. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join("   ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n") + "\n";
}

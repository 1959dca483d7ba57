// Keeps scripts/stryker-equivalents.json in step with the code: each entry that a Stryker report's mutants match gets
// its line's text (`source`) and that mutant's line, so it still matches after code above it moves; entries no mutant
// matches are listed (stale: find their line again by hand, or drop them).
// Usage: node scripts/stryker-equivalents-tidy.mjs [mutation-reports/stryker/<area>/mutation.json ...] (default: every area's report)
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isEquivalent } from "./stryker-equivalent-match.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const EQUIVALENTS = join(ROOT, "scripts", "stryker-equivalents.json");
const REPORTS = join(ROOT, "mutation-reports", "stryker");
const KEY_ORDER = ["file", "line", "column", "endColumn", "mutator", "replacement", "source", "reason"];

const reportFiles = process.argv.slice(2).length > 0 ? process.argv.slice(2)
  : existsSync(REPORTS) ? readdirSync(REPORTS).map((area) => join(REPORTS, area, "mutation.json")).filter(existsSync) : [];
if (reportFiles.length === 0) {
  console.error("stryker-equivalents-tidy: no Stryker report to read (run npm run mutation:stryker first, or name reports)");
  process.exit(2);
}
const files = {}; // source file → { lines, mutants } from the reports
for (const path of reportFiles) {
  for (const [file, { source, mutants }] of Object.entries(JSON.parse(readFileSync(path, "utf8")).files)) files[file] = { lines: source.split("\n"), mutants };
}

const entries = JSON.parse(readFileSync(EQUIVALENTS, "utf8"));
let placed = 0;
const stale = [];
for (const entry of entries) {
  const report = files[entry.file];
  if (!report) continue; // its area's report was not given: left as it is
  const mutant = report.mutants.find((m) => isEquivalent([entry], entry.file, m, report.lines));
  if (!mutant) {
    stale.push(entry);
    continue;
  }
  const { line } = mutant.location.start;
  if (entry.line !== line || entry.source === undefined) placed++;
  entry.line = line;
  entry.source = report.lines[line - 1].trim();
}
/** One entry on one line, its keys in KEY_ORDER (any others after them), as the file is written by hand. */
const line = (e) => `{${[...KEY_ORDER.filter((k) => k in e), ...Object.keys(e).filter((k) => !KEY_ORDER.includes(k))].map((k) => `${JSON.stringify(k)}: ${JSON.stringify(e[k])}`).join(", ")}}`;
writeFileSync(EQUIVALENTS, `[\n${entries.map((e) => `  ${line(e)}`).join(",\n")}\n]\n`);
console.log(`stryker-equivalents-tidy: ${entries.length} entries, ${placed} given their line's text or moved to it, ${stale.length} matching no mutant of the reports read`);
for (const e of stale) console.log(`  stale ${e.file}:${e.line}:${e.column ?? "*"} ${e.mutator} -> ${e.replacement ?? "*"}`);

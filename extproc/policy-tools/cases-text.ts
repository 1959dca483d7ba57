// `policy test` results as text: one line per case, and for a failing one what was expected, what happened and why.
import { explainText } from "./explain-text.js";
import type { SuiteResult } from "./run-cases.js";

export function casesText(file: string, results: readonly SuiteResult[]): string {
  const lines: string[] = [];
  for (const s of results) {
    for (const e of s.errors) lines.push(`ERROR ${file} (dataplane ${s.dataplane}): ${e}`);
    for (const c of s.cases) {
      lines.push(`${c.passed ? "PASS" : "FAIL"} ${c.name}`);
      if (c.passed) continue;
      lines.push(`  expected: ${JSON.stringify(c.expected)}`);
      if (c.actual) lines.push(`  actual:   ${JSON.stringify({ outcome: c.actual.outcome, status: c.actual.status, delayMs: c.actual.delayMs, kind: c.actual.kind, policy: c.actual.policy, rule: c.actual.rule })}`);
      for (const p of c.problems) lines.push(`  - ${p}`);
      if (c.explanation) lines.push(explainText(c.explanation, "    ").trimEnd());
    }
  }
  return lines.join("\n") + (lines.length ? "\n" : "");
}

export function casesSummary(results: readonly SuiteResult[]): { passed: number; failed: number; errors: number } {
  const cases = results.flatMap((s) => s.cases);
  const passed = cases.filter((c) => c.passed).length;
  return { passed, failed: cases.length - passed, errors: results.reduce((n, s) => n + s.errors.length, 0) };
}

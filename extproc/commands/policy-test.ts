// `meshext policy test CASES…`: runs YAML test cases (dataplane, policy paths, requests with expected outcomes)
// through the policy engine the sidecar runs; exit 0 all pass, 1 a case fails (or a suite cannot run), 2 usage.
import { readFile } from "node:fs/promises";
import { ConfigError } from "../config/flags.js";
import { commandArgs, OUTPUT_FLAG } from "../policy-tools/args.js";
import { parseCases } from "../policy-tools/cases.js";
import { casesSummary, casesText } from "../policy-tools/cases-text.js";
import { render } from "../policy-tools/output.js";
import { runSuite, type SuiteResult } from "../policy-tools/run-cases.js";

const FLAGS = [OUTPUT_FLAG] as const;
const USAGE = "meshext policy test CASES… [--output table|json|yaml]";
const SUMMARY =
  "Runs test cases through the sidecar's policy engine. A cases file holds YAML documents, each\n" +
  "  {dataplane: FILE-or-inline, policies: [PATH…], kumaVersion?, cases: [{name, request, expect}]}\n" +
  "where request is a POST /explain body (direction, client {spiffeID|tags|xfcc}, method, path, headers, authority,\n" +
  "inbound) plus repeat: N and faults: never|always, and expect gives outcome (allow, deny, abort, delay, rate-limited,\n" +
  "redirect, shadow-deny) and optionally status, delayMs, kind, policy, rule, requestHeaders/responseHeaders\n" +
  "{set, add, remove}, rewrite {path, authority}, redirect {status, location}. Paths are relative to the cases file.\n" +
  "A failing case prints expected vs actual and the explanation. Exit 0: all pass; 1: a failure; 2: usage.";

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const args = commandArgs(FLAGS, argv, env, { usage: USAGE, summary: SUMMARY }, { short: { o: "output" } });
  if (!args) return 0;
  const { config, positionals } = args;
  if (positionals.length === 0) throw new ConfigError(`no CASES file given\nUsage: ${USAGE}`);
  const files: Array<{ file: string; results: SuiteResult[] }> = [];
  for (const file of positionals) {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      files.push({ file, results: [{ dataplane: "-", errors: [`cannot read: ${(err as Error).message}`], cases: [] }] });
      continue;
    }
    const { suites, violations } = parseCases(text, file);
    const results: SuiteResult[] = violations.length ? [{ dataplane: "-", errors: violations.map((v) => `${v.field}: ${v.message}`), cases: [] }] : [];
    for (const suite of suites) results.push(await runSuite(suite));
    files.push({ file, results });
  }
  const all = files.flatMap((f) => f.results);
  const summary = casesSummary(all);
  const text = () => files.map((f) => casesText(f.file, f.results)).join("") + `${summary.passed} passed, ${summary.failed} failed${summary.errors ? `, ${summary.errors} error(s)` : ""}\n`;
  process.stdout.write(render(config.output, { summary, files }, text));
  return summary.failed > 0 || summary.errors > 0 ? 1 : 0;
}

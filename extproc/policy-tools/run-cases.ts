// Runs `policy test` suites through the engine the sidecar runs: one engine per suite (per rate-limited case a
// fresh one, so buckets start full), requests read by the sidecar's own /explain parser, decisions compared with
// what each case expects; a failing case carries the /explain report of its request.
import { readFile } from "node:fs/promises";
import { pinnedKumaVersion } from "../config/flags.js";
import { dataplaneFromObject, dataplaneFromText, type Dataplane } from "../policy/documents/dataplane.js";
import { explainRequest, parseExplainInput, type ExplainReport } from "../policy/views/explain.js";
import type { Violation } from "../policy/model/types.js";
import { actualOf, mismatches, type Actual } from "./case-outcome.js";
import type { Expectation, Suite, TestCase } from "./cases.js";
import { engineFor, FAULTS_ALWAYS, FAULTS_NEVER } from "./engine-set.js";
import { lintReport, findingLine } from "./lint.js";
import { loadPolicies, policySet } from "./load.js";

export interface CaseResult {
  name: string;
  passed: boolean;
  expected: Expectation;
  actual?: Actual;
  problems: string[];
  explanation?: ExplainReport;
}

export interface SuiteResult {
  dataplane: string;
  /** Why the suite could not run at all (unreadable dataplane, rejected policy documents, …). */
  errors: string[];
  cases: CaseResult[];
}

/** One fixed instant: repeated requests of a case all fall in the same rate-limit interval. */
const CLOCK_MS = 1_700_000_000_000;

export async function runSuite(suite: Suite): Promise<SuiteResult> {
  const label = typeof suite.dataplane === "string" ? suite.dataplane : String(suite.dataplane.name ?? "inline dataplane");
  const errors: string[] = [];
  let kumaVersion;
  try {
    kumaVersion = pinnedKumaVersion(suite.kumaVersion ?? "");
  } catch (err) {
    return { dataplane: label, errors: [(err as Error).message], cases: [] };
  }
  const dp = await readDataplane(suite.dataplane);
  if (!dp.dataplane) return { dataplane: label, errors: dp.violations.map((v) => `dataplane: ${v.field}: ${v.message}`), cases: [] };
  const loaded = await loadPolicies(suite.policies, kumaVersion);
  errors.push(...lintReport(loaded).errors.map(findingLine));
  if (errors.length > 0) return { dataplane: label, errors, cases: [] };
  const { policies, resources } = policySet(loaded);
  let random = FAULTS_NEVER;
  const opts = { kumaVersion, random: () => random(), nowMs: () => CLOCK_MS };
  let shared;
  try {
    shared = engineFor(dp.dataplane, policies, resources, opts);
  } catch (err) {
    return { dataplane: label, errors: [(err as Error).message], cases: [] };
  }
  const cases: CaseResult[] = [];
  for (const c of suite.cases) {
    random = c.faults === "always" ? FAULTS_ALWAYS : FAULTS_NEVER;
    const engine = c.repeat ? engineFor(dp.dataplane, policies, resources, opts) : shared;
    cases.push(runCase(engine, c, dp.dataplane));
  }
  return { dataplane: label, errors, cases };
}

function runCase(engine: ReturnType<typeof engineFor>, c: TestCase, dp: Dataplane): CaseResult {
  const { input, violations } = parseExplainInput(c.request, dp.mesh);
  if (!input) return { name: c.name, passed: false, expected: c.expect, problems: violations.map((v) => `request.${v.field}: ${v.message}`) };
  let decision;
  for (let i = 0; i < (c.repeat ?? 1); i++) decision = engine.evaluate(input.facts, { dryRun: !c.repeat, identity: input.identity, inbound: input.inbound }).decision;
  const actual = actualOf(decision!);
  const problems = mismatches(c.expect, actual);
  if (problems.length === 0) return { name: c.name, passed: true, expected: c.expect, actual, problems };
  return { name: c.name, passed: false, expected: c.expect, actual, problems, explanation: explainRequest(engine, input) };
}

async function readDataplane(ref: Suite["dataplane"]): Promise<{ dataplane?: Dataplane; violations: Violation[] }> {
  if (typeof ref !== "string") return dataplaneFromObject(ref);
  try {
    return dataplaneFromText(await readFile(ref, "utf8"));
  } catch (err) {
    return { violations: [{ field: "file", message: `cannot read ${ref}: ${(err as Error).message}` }] };
  }
}

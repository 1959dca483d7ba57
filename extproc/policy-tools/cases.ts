// The `policy test` cases file: YAML documents, each a suite {dataplane, policies, kumaVersion?, cases: [...]};
// a case is {name, request (the sidecar's POST /explain body, plus repeat and faults), expect}. Every problem
// is a violation with its field path; nothing here runs the engine.
import { dirname, isAbsolute, resolve } from "node:path";
import { parseDocuments } from "../policy/documents/parse.js";
import { at, Issues, isObj, type Obj } from "../policy/documents/issues.js";
import type { Violation } from "../policy/model/types.js";

export const OUTCOMES = ["allow", "deny", "abort", "delay", "rate-limited", "redirect", "shadow-deny", "not-ready"] as const;
export type CaseOutcome = (typeof OUTCOMES)[number];

export interface HeaderExpectation {
  set?: Record<string, string>;
  add?: Record<string, string>;
  remove?: string[];
}

export interface Expectation {
  outcome: CaseOutcome;
  status?: number;
  delayMs?: number;
  kind?: string;
  policy?: string;
  rule?: string;
  requestHeaders?: HeaderExpectation;
  responseHeaders?: HeaderExpectation;
  rewrite?: { path?: string; authority?: string };
  redirect?: { status?: number; location?: string };
}

export interface TestCase {
  name: string;
  /** The POST /explain body describing the request. */
  request: Obj;
  /** Decide this many times in a row at one instant (rate limits take tokens); the last decision counts. */
  repeat?: number;
  /** `never` (default): only 100% faults fire; `always`: every fault above 0% fires. */
  faults: "never" | "always";
  expect: Expectation;
}

export interface Suite {
  /** A path (relative to the cases file) or an inline Dataplane document. */
  dataplane: string | Obj;
  policies: string[];
  kumaVersion?: string;
  cases: TestCase[];
}

export function parseCases(text: string, file: string): { suites: Suite[]; violations: Violation[] } {
  const suites: Suite[] = [];
  const violations: Violation[] = [];
  const base = dirname(file);
  const rel = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  for (const doc of parseDocuments(text)) {
    const where = `document[${doc.index}]`;
    if (doc.violations) {
      violations.push(...doc.violations.map((v) => ({ field: where, message: v.message })));
      continue;
    }
    const issues = new Issues();
    const o = issues.obj(doc.value, where) ?? {};
    const dataplane = typeof o.dataplane === "string" ? rel(o.dataplane) : isObj(o.dataplane) ? o.dataplane : undefined;
    if (dataplane === undefined) issues.add(at(where, "dataplane"), "must be a Dataplane file path or an inline Dataplane");
    const policies = typeof o.policies === "string" ? [o.policies] : o.policies;
    if (!Array.isArray(policies) || policies.length === 0 || !policies.every((p) => typeof p === "string")) issues.add(at(where, "policies"), "must be a path or a list of paths");
    const kumaVersion = issues.str(o.kumaVersion === undefined ? undefined : String(o.kumaVersion), at(where, "kumaVersion"), false);
    const cases = (issues.arr(o.cases, at(where, "cases"), true, 1) ?? []).map((c, i) => parseCase(issues, c, at(at(where, "cases"), i)));
    violations.push(...issues.list);
    if (issues.list.length === 0) suites.push({ dataplane: dataplane!, policies: (policies as string[]).map(rel), ...(kumaVersion ? { kumaVersion } : {}), cases: cases as TestCase[] });
  }
  if (suites.length === 0 && violations.length === 0) violations.push({ field: "document", message: "no suite: expected {dataplane, policies, cases}" });
  return { suites, violations };
}

function parseCase(issues: Issues, raw: unknown, path: string): TestCase | undefined {
  const c = issues.obj(raw, path);
  if (!c) return undefined;
  const name = issues.str(c.name, at(path, "name")) ?? "";
  const request = { ...(issues.obj(c.request, at(path, "request")) ?? {}) };
  const repeat = request.repeat === undefined ? undefined : issues.int(request.repeat, at(at(path, "request"), "repeat"), 1, 100_000);
  const faults = issues.oneOf(request.faults ?? "never", at(at(path, "request"), "faults"), ["never", "always"] as const) ?? "never";
  delete request.repeat;
  delete request.faults;
  const e = issues.obj(c.expect, at(path, "expect")) ?? {};
  const ep = at(path, "expect");
  const expect: Expectation = { outcome: issues.oneOf(e.outcome, at(ep, "outcome"), OUTCOMES) ?? "allow" };
  if (e.status !== undefined) expect.status = issues.int(e.status, at(ep, "status"), 100, 599);
  if (e.delayMs !== undefined) expect.delayMs = issues.int(e.delayMs, at(ep, "delayMs"), 0, 86_400_000);
  for (const key of ["kind", "policy", "rule"] as const) if (e[key] !== undefined) expect[key] = issues.str(e[key], at(ep, key));
  for (const key of ["requestHeaders", "responseHeaders"] as const) if (e[key] !== undefined) expect[key] = headerExpectation(issues, e[key], at(ep, key));
  if (e.rewrite !== undefined) {
    const r = issues.obj(e.rewrite, at(ep, "rewrite")) ?? {};
    expect.rewrite = { ...(r.path !== undefined ? { path: issues.str(r.path, at(at(ep, "rewrite"), "path")) } : {}), ...(r.authority !== undefined ? { authority: issues.str(r.authority, at(at(ep, "rewrite"), "authority")) } : {}) };
  }
  if (e.redirect !== undefined) {
    const r = issues.obj(e.redirect, at(ep, "redirect")) ?? {};
    expect.redirect = { ...(r.status !== undefined ? { status: issues.int(r.status, at(at(ep, "redirect"), "status"), 300, 399) } : {}), ...(r.location !== undefined ? { location: issues.str(r.location, at(at(ep, "redirect"), "location")) } : {}) };
  }
  return { name, request, ...(repeat ? { repeat } : {}), faults, expect };
}

function headerExpectation(issues: Issues, raw: unknown, path: string): HeaderExpectation {
  const o = issues.obj(raw, path) ?? {};
  const out: HeaderExpectation = {};
  for (const key of ["set", "add"] as const) {
    const m = issues.stringMap(o[key], at(path, key), false);
    if (m) out[key] = Object.fromEntries(Object.entries(m).map(([k, v]) => [k.toLowerCase(), v]));
  }
  if (o.remove !== undefined) {
    const list = issues.arr(o.remove, at(path, "remove")) ?? [];
    if (!list.every((h) => typeof h === "string")) issues.add(at(path, "remove"), "must be a list of header names");
    else out.remove = (list as string[]).map((h) => h.toLowerCase());
  }
  return out;
}

// What a decision did, in the terms a test case states it (outcome, status, delay, deciding policy, header edits,
// rewrite, redirect), and the differences between an expectation and that.
import type { Decision, HeaderEdits } from "../decision.js";
import type { CaseOutcome, Expectation, HeaderExpectation } from "./cases.js";

export interface Actual {
  outcome: CaseOutcome;
  status?: number;
  delayMs?: number;
  kind: string;
  policy?: string;
  rule?: string;
  reason: string;
  requestHeaders?: HeaderEdits;
  responseHeaders?: HeaderEdits;
  location?: string;
}

export function actualOf(d: Decision): Actual {
  const e = d.explain;
  const base = { kind: e.kind, ...(e.policy ? { policy: e.policy } : {}), ...(e.rule ? { rule: e.rule } : {}), reason: e.reason, ...(d.delayMs ? { delayMs: d.delayMs } : {}) };
  if (d.type === "respond") {
    const location = d.headers.find(([k]) => k === "location")?.[1];
    const outcome: CaseOutcome = e.action === "rate-limit" ? "rate-limited" : e.action === "abort" || e.action === "not-ready" ? e.action : location !== undefined && e.kind === "MeshHTTPRoute" ? "redirect" : "deny";
    return { outcome, status: d.status, ...base, ...(location !== undefined ? { location } : {}) };
  }
  const outcome: CaseOutcome = e.action === "shadow-deny" ? "shadow-deny" : (d.delayMs ?? 0) > 0 ? "delay" : "allow";
  return { outcome, ...base, ...(d.requestHeaders ? { requestHeaders: d.requestHeaders } : {}), ...(d.responseHeaders ? { responseHeaders: d.responseHeaders } : {}) };
}

/** Every way `actual` differs from `expect` (empty: the case passes). Only what the expectation states is compared. */
export function mismatches(expect: Expectation, actual: Actual): string[] {
  const out: string[] = [];
  const check = (what: string, want: unknown, got: unknown) => {
    if (want !== undefined && want !== got) out.push(`${what}: expected ${JSON.stringify(want)}, got ${got === undefined ? "none" : JSON.stringify(got)}`);
  };
  check("outcome", expect.outcome, actual.outcome);
  check("status", expect.status, actual.status);
  check("delayMs", expect.delayMs, actual.delayMs);
  check("kind", expect.kind, actual.kind);
  check("policy", expect.policy, actual.policy);
  check("rule", expect.rule, actual.rule);
  headers("request header", expect.requestHeaders, actual.requestHeaders, out);
  headers("response header", expect.responseHeaders, actual.responseHeaders, out);
  const set = new Map(actual.requestHeaders?.set ?? []);
  check("rewritten path", expect.rewrite?.path, set.get(":path"));
  check("rewritten authority", expect.rewrite?.authority, set.get(":authority"));
  if (expect.redirect) {
    check("redirect status", expect.redirect.status, actual.outcome === "redirect" ? actual.status : undefined);
    check("redirect location", expect.redirect.location, actual.location);
  }
  return out;
}

function headers(what: string, want: HeaderExpectation | undefined, got: HeaderEdits | undefined, out: string[]): void {
  if (!want) return;
  for (const op of ["set", "add"] as const) {
    const edits = got?.[op] ?? [];
    for (const [name, value] of Object.entries(want[op] ?? {})) {
      const values = edits.filter(([k]) => k.toLowerCase() === name).map(([, v]) => v);
      if (!values.includes(value)) out.push(`${what} ${op} ${name}: expected ${JSON.stringify(value)}, got ${values.length ? JSON.stringify(values) : "none"}`);
    }
  }
  for (const name of want.remove ?? []) if (!(got?.remove ?? []).some((h) => h.toLowerCase() === name)) out.push(`${what} remove ${name}: expected, not removed`);
}

// Runs one conformance case: <case>.input.yaml holds a title comment, a Dataplane, policies (unsorted),
// an optional `engine:` doc (seed, flags, clock) and a `requests:` doc; the result is the golden's shape.
import { readFileSync } from "node:fs";
import { dataplaneFromObject } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { parseExplainInput } from "../../extproc/policy/views/explain.js";
import { identify, parseDocuments, validatePolicyObject, type Rejected } from "../../extproc/policy/documents/parse.js";
import { seededRandom } from "../../extproc/policy/decide/random.js";
import { buildRules } from "../../extproc/policy/plans/rules.js";
import { groupingOf } from "../../extproc/policy/plans/subset-groups.js";
import type { Policy } from "../../extproc/policy/model/types.js";
import type { Decision } from "../../extproc/decision.js";
import type { KumaVersion } from "../../extproc/policy/model/kuma-version.js";
import { isResourceDocument, resourceFromObject, resourcesOf, type Resource } from "../../extproc/policy/documents/resources.js";

/** Cases without `engine.kumaVersion` are the original 2.6 corpus and run as Kuma 2.6. */
export const CORPUS_DEFAULT_VERSION: KumaVersion = "2.6";

interface EngineDoc {
  /** Kuma version whose semantics decide; CORPUS_DEFAULT_VERSION when absent. */
  kumaVersion?: KumaVersion;
  seed?: number;
  trustKumaTagsHeader?: boolean;
  beforeFirstSync?: "allow" | "deny";
  /** Do not load policies at all (before-first-sync cases). */
  noSync?: boolean;
}

interface RequestDoc {
  name: string;
  /** Send this many identical requests; the golden then counts outcomes. */
  samples?: number;
  /** Advance the fake clock by this much before the request. */
  advanceMs?: number;
  [k: string]: unknown;
}

export interface CaseResult {
  title: string;
  rejected: Rejected[];
  selected: Record<string, string[]>;
  rules: Record<string, Record<string, unknown>>;
  requests: Array<{ name: string; decision?: unknown; counts?: Record<string, number> }>;
  /** Kuma deprecation warnings of loaded policies (only when there are some). */
  warnings?: Array<{ index: number; kind?: string; name?: string; warnings: unknown[] }>;
}

/** `versionOverride` runs the case as another Kuma version than it states. */
export function runCase(inputFile: string, versionOverride?: KumaVersion): CaseResult {
  const text = readFileSync(inputFile, "utf8");
  const title = (/^#\s*(.*)$/m.exec(text.split("\n")[0] ?? "")?.[1] ?? "").trim();
  if (!title) throw new Error(`${inputFile}: the first line must be a "# title" comment`);
  const docs = parseDocuments(text);
  const policies: Policy[] = [];
  const rejected: Rejected[] = [];
  const warnings: NonNullable<CaseResult["warnings"]> = [];
  const resources: Resource[] = [];
  let dataplaneDoc: unknown;
  let requests: RequestDoc[] = [];
  const values = docs.map((d) => (typeof d.value === "object" && d.value !== null ? (d.value as Record<string, unknown>) : undefined));
  const engineDoc: EngineDoc = (values.find((v) => v && "engine" in v)?.engine as EngineDoc | undefined) ?? {};
  const kumaVersion = versionOverride ?? engineDoc.kumaVersion ?? CORPUS_DEFAULT_VERSION;
  for (const [i, d] of docs.entries()) {
    const v = values[i];
    if (d.violations) rejected.push({ index: d.index, violations: d.violations });
    else if (v?.type === "Dataplane") dataplaneDoc = v;
    else if (v && "requests" in v) requests = v.requests as RequestDoc[];
    else if (v && "engine" in v) continue;
    else if (isResourceDocument(v)) {
      const r = resourceFromObject(v);
      if (r.resource) resources.push(r.resource);
      else rejected.push({ index: d.index, ...identify(d.value), violations: r.violations });
    } else {
      const r = validatePolicyObject(d.value, kumaVersion);
      if (r.policy) policies.push(r.policy);
      else rejected.push({ index: d.index, ...identify(d.value), violations: r.violations });
      if (r.warnings.length > 0) warnings.push({ index: d.index, ...identify(d.value), warnings: r.warnings });
    }
  }
  const dp = dataplaneFromObject(dataplaneDoc, kumaVersion);
  if (!dp.dataplane) throw new Error(`${inputFile}: bad Dataplane: ${JSON.stringify(dp.violations)}`);
  let nowMs = 1_000_000;
  const engine = new PolicyEngine({
    dataplane: dp.dataplane,
    random: seededRandom(engineDoc.seed ?? 1),
    nowMs: () => nowMs,
    trustKumaTagsHeader: engineDoc.trustKumaTagsHeader,
    beforeFirstSync: engineDoc.beforeFirstSync,
    kumaVersion,
  });
  if (!engineDoc.noSync) engine.replace(policies, resourcesOf(resources));
  const snap = engine.current();
  const selected: CaseResult["selected"] = {};
  const rules: CaseResult["rules"] = {};
  for (const ib of snap?.inbounds ?? []) {
    rules[ib.inbound.name] = {};
    for (const [kind, plan] of Object.entries(ib.from)) {
      selected[`${ib.inbound.name} ${kind}`] = plan.policies.map((p) => p.name);
      rules[ib.inbound.name]![kind] = buildRules(plan.items, groupingOf(snap!.traits)).rules;
    }
    for (const [kind, plan] of Object.entries(ib.rules)) {
      selected[`${ib.inbound.name} ${kind}`] = plan.policies.map((p) => p.name);
      if (plan.ignoredFrom.length > 0) selected[`${ib.inbound.name} ${kind} ignored from`] = plan.ignoredFrom.map((p) => p.name);
      rules[ib.inbound.name]![kind] = plan.rules.map((r) => ({ match: r.matches ?? null, conf: r.conf, origin: `${r.policy.name} ${r.rule}` }));
    }
  }
  if (snap && snap.shadowed.length > 0) selected["shadowed (inspect only)"] = snap.shadowed.map((p) => p.name);
  if (snap && snap.outbound.routes.length > 0) selected["outbound MeshHTTPRoute"] = snap.outbound.routes.map((p) => p.name);
  const out: CaseResult["requests"] = [];
  for (const req of requests) {
    nowMs += req.advanceMs ?? 0;
    const { input, violations } = parseExplainInput(req, dp.dataplane.mesh);
    if (!input) throw new Error(`${inputFile}: request ${req.name}: ${JSON.stringify(violations)}`);
    const decide = (): Decision => engine.evaluate(input.facts, { identity: input.identity, inbound: input.inbound }).decision;
    if (req.samples) {
      const counts: Record<string, number> = {};
      for (let i = 0; i < req.samples; i++) {
        const k = outcomeKey(decide());
        counts[k] = (counts[k] ?? 0) + 1;
      }
      out.push({ name: req.name, counts: Object.fromEntries(Object.entries(counts).sort()) });
    } else out.push({ name: req.name, decision: decide() });
  }
  const result: CaseResult = { title, rejected, selected, rules, requests: out };
  if (warnings.length > 0) result.warnings = warnings;
  return result;
}

function outcomeKey(d: Decision): string {
  const delay = d.delayMs ? ` +${d.delayMs}ms` : "";
  return d.type === "respond" ? `${d.explain.action} ${d.status}${delay}` : `${d.explain.action}${delay}`;
}

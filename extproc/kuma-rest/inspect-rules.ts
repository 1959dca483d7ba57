// Kuma's inspect view of one Dataplane (`GET /meshes/{mesh}/dataplanes/{name}/_rules`, InspectRules in
// `api/openapi/specs/api.yaml` and `rulesForResource` in `pkg/api-server/resource_endpoints.go` @v2.14.3),
// built from the policy engine's compiled snapshot for that dataplane. Pure; shared by the control plane and
// the sidecar's /explain. Per policy type, in Kuma's plugin order: legacy `fromRules` (tag subsets),
// `inboundRules` (the 2.10+ `rules[]` list with `match`, `conf`, `origin`), `toRules` (by kuma.io/service).
import { createHash } from "node:crypto";
import type { InboundPlan, Snapshot } from "../policy/compile.js";
import { routeRulesFor } from "../policy/compile.js";
import { mergeRouteRules, type MergedRouteRule, type RouteEntry } from "../policy/routes.js";
import type { Policy, PolicyType, RouteMatch } from "../policy/types.js";
import { fromRulesOf, inboundRulesOf } from "./inspect-inbound-rules.js";

/** Kuma's `Meta`: what identifies a resource in inspect answers (labels `{}` when it has none). */
export interface Meta {
  type: string;
  mesh: string;
  name: string;
  labels: Record<string, string>;
}

export interface RuleMatcher {
  key: string;
  value: string;
  not: boolean;
}

export interface Rule {
  matchers: RuleMatcher[];
  conf: unknown;
  origin: Meta[];
}

export interface InboundRef {
  name?: string;
  port: number;
  tags: Record<string, string>;
}

export interface InboundRule {
  /** Absent for a catch-all rule. */
  match?: unknown;
  conf: unknown[];
  origin: Array<{ resourceMeta: Meta; ruleIndex: number }>;
}

export interface InspectRule {
  type: string;
  fromRules: Array<{ inbound: InboundRef; rules: Rule[] }>;
  inboundRules: Array<{ inbound: InboundRef; rules: InboundRule[] }>;
  toResourceRules: unknown[];
  toRules: Rule[];
  warnings: string[];
}

export interface InspectRules {
  httpMatches: Array<{ hash: string; match: RouteMatch[] }>;
  resource: Meta;
  rules: InspectRule[];
}

/** Kuma's policy plugin order (`Order` of each type's descriptor: route 100, MFI 800, MRL 900, MTP 1100). */
export const INSPECT_ORDER: readonly PolicyType[] = ["MeshHTTPRoute", "MeshFaultInjection", "MeshRateLimit", "MeshTrafficPermission"];

export function metaOf(r: { type: string; mesh: string; name: string; labels?: Record<string, string> }): Meta {
  return { type: r.type, mesh: r.mesh, name: r.name, labels: { ...(r.labels ?? {}) } };
}

/**
 * The inspect view of `snapshot`'s dataplane; `resource` is the Dataplane as stored (its Meta heads the answer).
 * `portlessPort` stands in for an inbound without a port (a dataplane described by tags only).
 */
export function inspectRules(snapshot: Snapshot, resource: { mesh: string; name: string; labels?: Record<string, string> }, portlessPort = 0): InspectRules {
  const matches = new Map<string, RouteMatch[]>();
  const rules: InspectRule[] = [];
  for (const type of INSPECT_ORDER) {
    const entry: InspectRule = { type, fromRules: [], inboundRules: [], toResourceRules: [], toRules: [], warnings: [] };
    if (type === "MeshHTTPRoute") entry.toRules = routeToRules(snapshot, matches);
    else {
      for (const plan of byPort(snapshot.inbounds)) {
        const inbound = inboundRef(plan, portlessPort);
        const from = fromRulesOf(snapshot, plan, type);
        if (from.length) entry.fromRules.push({ inbound, rules: from });
        const inboundRules = inboundRulesOf(plan, type);
        if (inboundRules.length) entry.inboundRules.push({ inbound, rules: inboundRules });
      }
    }
    if (entry.fromRules.length || entry.inboundRules.length || entry.toRules.length) rules.push(entry);
  }
  const httpMatches = [...matches].map(([hash, match]) => ({ hash, match })).sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
  return { httpMatches, resource: metaOf({ type: "Dataplane", ...resource }), rules };
}

function byPort(plans: readonly InboundPlan[]): InboundPlan[] {
  return [...plans].sort((a, b) => (a.inbound.port ?? 0) - (b.inbound.port ?? 0));
}

/** Kuma's `Inbound`: the Dataplane's own inbound `name` only when it declared one. */
function inboundRef(plan: InboundPlan, portlessPort: number): InboundRef {
  const { inbound } = plan;
  return { ...(inbound.declaredName ? { name: inbound.declaredName } : {}), port: inbound.port ?? portlessPort, tags: { ...inbound.tags } };
}

/**
 * MeshHTTPRoute's legacy `toRules`: one rule per destination service named in `to[]` (its routes merged with
 * the `kind: Mesh` ones), and, when there are `kind: Mesh` entries, one rule for every other service.
 */
function routeToRules(snapshot: Snapshot, matches: Map<string, RouteMatch[]>): Rule[] {
  const plan = snapshot.outbound;
  const out: Rule[] = [];
  const services = [...plan.byService.keys()];
  for (const service of services) {
    out.push(routeRule([{ key: "kuma.io/service", value: service, not: false }], routeRulesFor(plan, service), matches));
  }
  if (plan.meshEntries.length) {
    const others = services.map((s) => ({ key: "kuma.io/service", value: s, not: true }));
    out.push(routeRule(others, mergeRouteRules(plan.meshEntries as RouteEntry[]), matches));
  }
  return out;
}

function routeRule(matchers: RuleMatcher[], merged: readonly MergedRouteRule[], matches: Map<string, RouteMatch[]>): Rule {
  const origin: Policy[] = [];
  for (const r of merged) for (const s of r.sources) if (!origin.includes(s.policy)) origin.push(s.policy);
  for (const r of merged) matches.set(matchesHash(r.matches), r.matches);
  return { matchers, conf: { rules: merged.map((r) => ({ matches: r.matches, default: withDefaultWeights(r.default) })) }, origin: origin.map(metaOf) };
}

/** Kuma fills in `weight: 1` on backendRefs that have none. */
function withDefaultWeights(def: MergedRouteRule["default"]): unknown {
  if (!Array.isArray(def.backendRefs)) return def;
  return { ...def, backendRefs: def.backendRefs.map((b) => (typeof b === "object" && b !== null && !("weight" in b) ? { ...b, weight: 1 } : b)) };
}

/**
 * Kuma's `HashMatches`: base64 SHA-256 of the Go JSON of the match list, whose field order is path
 * {value, type}, method, queryParams {type, name, value}, headers {type, name, value}.
 */
export function matchesHash(matches: readonly RouteMatch[]): string {
  const canonical = matches.map((m) => ({
    ...(m.path ? { path: { value: m.path.value, type: m.path.type } } : {}),
    ...(m.method ? { method: m.method } : {}),
    ...(m.queryParams ? { queryParams: m.queryParams.map((q) => ({ type: q.type, name: q.name, value: q.value })) } : {}),
    ...(m.headers ? { headers: m.headers.map((h) => ({ ...(h.type ? { type: h.type } : {}), name: h.name, ...(h.value !== undefined && h.value !== "" ? { value: h.value } : {}) })) } : {}),
  }));
  return createHash("sha256").update(JSON.stringify(canonical)).digest("base64");
}

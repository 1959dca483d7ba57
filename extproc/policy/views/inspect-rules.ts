// Kuma's inspect view of one Dataplane exactly as Kuma 2.14's REST API writes it (`GET /meshes/{mesh}/
// dataplanes/{name}/_rules`: InspectRules in `api/openapi/specs/api.yaml`, `rulesForResource` in
// `pkg/api-server/resource_endpoints.go` @v2.14.3; under 3.0 the shape of Kuma's master branch, which drops
// `fromRules`/`toRules` and inbound tags: resource_inspect_endpoints.go there). The engine's pure view (policy/inspect.ts) supplies the
// outbound rules and warnings; this adds the wire details Kuma's answer has: types in plugin order, the
// per-inbound `fromRules`/`inboundRules` as Kuma builds them (inspect-inbound-rules.ts), `match` omitted on
// catch-alls, Meta without `kri`, `weight: 1` on backendRefs, and `httpMatches` under Kuma's hash.
import { createHash } from "node:crypto";
import { compile } from "../plans/compile.js";
import { versionTraits } from "../model/kuma-version.js";
import type { Dataplane } from "../model/dataplane.js";
import { dataplaneRules, type InspectOptions, type Meta } from "./inspect.js";
import { KIND_TRAITS, POLICY_TYPES, type Policy, type PolicyType, type RouteMatch } from "../model/types.js";
import { fromRulesOf, inboundRulesOf } from "./inspect-inbound-rules.js";
import { metaOf, type InboundRef, type InboundRule, type InspectRule, type InspectRules, type Rule } from "./inspect-shapes.js";

export { metaOf };
export type { InboundRef, InboundRule, InspectRule, InspectRules, Meta, Rule };

/** Kuma's policy plugin order (`Order` of each type's descriptor: route 100, MFI 800, MRL 900, MTP 1100). */
export const INSPECT_ORDER: readonly PolicyType[] = [...POLICY_TYPES].sort((a, b) => KIND_TRAITS[a].pluginOrder - KIND_TRAITS[b].pluginOrder);

/**
 * The `_rules` answer for `dp` under `policies`. `portlessPort` stands in for an inbound without a port (a
 * dataplane described by tags only registers a placeholder port).
 */
export function inspectRules(policies: readonly Policy[], dp: Dataplane, opts: InspectOptions = {}, portlessPort = 0): InspectRules {
  const view = dataplaneRules(policies, dp, opts);
  const legacy = versionTraits(opts.kumaVersion).inspectLegacyRules;
  const snapshot = compile(policies, dp, 0, { kumaVersion: opts.kumaVersion, resources: opts.resources });
  const inbounds = [...snapshot.inbounds].sort((a, b) => (a.inbound.port ?? 0) - (b.inbound.port ?? 0));
  const rules: InspectRule[] = [];
  for (const type of INSPECT_ORDER) {
    const engine = view.rules.find((r) => r.type === type);
    const entry: InspectRule = {
      type,
      fromRules: [],
      inboundRules: [],
      toResourceRules: (engine?.toResourceRules ?? []).map((r) => ({ ...r, resourceMeta: metaOf(r.resourceMeta), conf: r.conf.map(withDefaultWeights), origin: r.origin.map(plainOrigin) })),
      toRules: (engine?.toRules ?? []).map((r) => ({ ...r, conf: withDefaultWeights(r.conf), origin: r.origin.map(metaOf) })),
      warnings: engine?.warnings ?? [],
    };
    for (const plan of type === "MeshHTTPRoute" ? [] : inbounds) {
      const inbound: InboundRef = { ...(plan.inbound.declaredName ? { name: plan.inbound.declaredName } : {}), port: plan.inbound.port ?? portlessPort, tags: legacy ? { ...plan.inbound.tags } : null };
      const from = legacy ? fromRulesOf(snapshot, plan, type) : [];
      if (from.length) entry.fromRules!.push({ inbound, rules: from });
      const inboundRules = inboundRulesOf(plan, type);
      if (inboundRules.length) entry.inboundRules.push({ inbound, rules: inboundRules });
    }
    if (!legacy) {
      delete entry.fromRules;
      delete entry.toRules;
    }
    if (entry.fromRules?.length || entry.inboundRules.length || entry.toRules?.length || entry.toResourceRules.length) rules.push(entry);
  }
  return { httpMatches: httpMatchesOf(rules, legacy ? snapshot.outbound.routes : []), resource: metaOf(view.resource), rules };
}

function plainOrigin(o: { resourceMeta: Meta; ruleIndex: number }): { resourceMeta: Meta; ruleIndex: number } {
  return { resourceMeta: metaOf(o.resourceMeta), ruleIndex: o.ruleIndex };
}

type RouteConf = { rules?: Array<{ matches: RouteMatch[]; default: Record<string, unknown> }> };

/** Kuma fills in `weight: 1` on route backendRefs that have none. */
export function withDefaultWeights(conf: unknown): unknown {
  const c = conf as RouteConf;
  if (!c || !Array.isArray(c.rules)) return conf;
  const weighted = (b: unknown) => (typeof b === "object" && b !== null && !("weight" in b) ? { ...b, weight: 1 } : b);
  return { ...c, rules: c.rules.map((r) => (Array.isArray(r.default?.backendRefs) ? { ...r, default: { ...r.default, backendRefs: r.default.backendRefs.map(weighted) } } : r)) };
}

/** `to` kinds Kuma's legacy to-rules take in whatever they name (IsOldKind; a MeshService by labels too). */
const LEGACY_TO_KINDS: ReadonlySet<string> = new Set(["Mesh", "MeshSubset", "MeshService", "MeshServiceSubset"]);

/**
 * Every MeshHTTPRoute match list, once, under its hash, sorted by hash (as Kuma lists them): those of the view's
 * rules, and those of every `to` rule of an old kind of the routes selecting this proxy (Kuma collects them from
 * all of its legacy to-rules and resource rules, whether or not a rule of the view shows them).
 */
function httpMatchesOf(rules: readonly InspectRule[], routes: readonly Policy[]): InspectRules["httpMatches"] {
  const byHash = new Map<string, RouteMatch[]>();
  for (const route of routes) {
    for (const to of (route.spec.to ?? []) as Array<{ targetRef?: { kind?: string }; rules?: Array<{ matches?: RouteMatch[] }> }>) {
      if (!LEGACY_TO_KINDS.has(to.targetRef?.kind ?? "")) continue;
      for (const rule of to.rules ?? []) if (rule.matches) byHash.set(matchesHash(rule.matches), rule.matches);
    }
  }
  for (const r of rules.filter((x) => x.type === "MeshHTTPRoute")) {
    const confs = [...((r.toRules ?? []) as Array<{ conf: RouteConf }>).map((x) => x.conf), ...(r.toResourceRules as Array<{ conf: RouteConf[] }>).flatMap((x) => x.conf)];
    for (const conf of confs) for (const rule of conf.rules ?? []) byHash.set(matchesHash(rule.matches), rule.matches);
  }
  return [...byHash].map(([hash, match]) => ({ hash, match })).sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
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

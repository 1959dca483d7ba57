// Kuma's inspect views as pure functions over policies, resources and dataplanes: the per-dataplane rule view
// of `GET /meshes/{mesh}/dataplanes/{name}/_rules` (InspectRules in Kuma 2.14's api/openapi/specs, built like
// pkg/api-server/resource_endpoints.go) and `GET /meshes/{mesh}/{policy-type}/{name}/_resources/dataplanes`.
// The control plane renders them over HTTP; nothing here does I/O. Entry points: dataplaneRules and
// dataplanesForPolicy. Their inputs: Policy[] (parse.ts), Dataplane (dataplane.ts dataplaneFromObject),
// MeshResources (resources.ts resourceFromObject / resourcesOf), KumaVersion (kuma-version.ts parseKumaVersion).
import { compile, routeTableFor, type InboundPlan, type Snapshot } from "../plans/compile.js";
import type { Dataplane, Inbound } from "../model/dataplane.js";
import { buildRules } from "../plans/rules.js";
import { groupingOf } from "../plans/subset-groups.js";
import { policySelectsDataplane } from "../selection/match.js";
import { versionTraits, type KumaVersion, type VersionTraits } from "../model/kuma-version.js";
import { byDisplayName, byPolicyAttributes } from "../selection/precedence.js";
import { refResolvesTo } from "../plans/destinations.js";
import { portSectionName, NO_RESOURCES, type MeshResources, type ServiceResource } from "../documents/resources.js";
import { KIND_TRAITS, POLICY_TYPES, type Policy, type PolicyType, type TargetRef } from "../model/types.js";

/** Kuma's `Meta`: what identifies a resource in inspect answers. */
export interface Meta {
  type: string;
  mesh: string;
  name: string;
  labels: Record<string, string>;
  kri?: string;
}

export interface InspectInbound {
  name?: string;
  tags: Record<string, string>;
  port: number;
}

export interface RuleOrigin {
  resourceMeta: Meta;
  ruleIndex: number;
}

export interface InspectRule {
  type: PolicyType;
  proxyRule?: { conf: unknown; origin: Meta[] };
  toRules: Array<{ matchers: Array<{ key: string; value: string; not: boolean }>; conf: unknown; origin: Meta[] }>;
  toResourceRules: Array<{ resourceMeta: Meta; resourceSectionName: string; conf: unknown[]; origin: RuleOrigin[] }>;
  fromRules: Array<{ inbound: InspectInbound; rules: Array<{ matchers: Array<{ key: string; value: string; not: boolean }>; conf: unknown; origin: Meta[] }> }>;
  inboundRules: Array<{ inbound: InspectInbound; rules: Array<{ conf: unknown[]; match: unknown; origin: RuleOrigin[] }> }>;
  warnings: string[];
}

/** Kuma 2.14's InspectRules: `{resource, rules, httpMatches}`. */
export interface InspectRules {
  resource: Meta;
  rules: InspectRule[];
  httpMatches: Array<{ hash: string; match: unknown }>;
}

export interface InspectOptions {
  kumaVersion?: KumaVersion;
  resources?: MeshResources;
  /** Include `kuma.io/effect: shadow` policies as if they were in force (Kuma's `?shadow=true`). */
  includeShadow?: boolean;
}

/** Kuma resource identifier of a policy: `kri_<short>_<mesh>_<zone>_<namespace>_<display name>_` (pkg/core/kri). */
export function policyKri(p: Policy): string {
  return `kri_${KIND_TRAITS[p.type].shortName}_${p.mesh}_${p.zone ?? ""}_${p.k8sNamespace ?? ""}_${p.displayName}_`;
}

export function policyMeta(p: Policy): Meta {
  return { type: p.type, mesh: p.mesh, name: p.name, labels: { ...p.labels }, kri: policyKri(p) };
}

export function dataplaneMeta(dp: Dataplane): Meta {
  return { type: "Dataplane", mesh: dp.mesh, name: dp.name, labels: { ...(dp.labels ?? {}) } };
}

function serviceMeta(s: ServiceResource): Meta {
  return { type: s.kind, mesh: s.mesh, name: s.name, labels: { ...s.labels } };
}

/**
 * The `/_rules` view of one dataplane: per policy type that affects it, its legacy `from` rules, its 2.10+
 * inbound rules (conf + match + origin), and MeshHTTPRoute's to-rules (by kuma.io/service) and to-resource
 * rules (by real MeshService / MeshExternalService / MeshMultiZoneService).
 */
export function dataplaneRules(policies: readonly Policy[], dp: Dataplane, opts: InspectOptions = {}): InspectRules {
  const input = opts.includeShadow ? policies.map((p) => ({ ...p, shadow: false })) : policies;
  const snap = compile(input, dp, 0, { kumaVersion: opts.kumaVersion, resources: opts.resources ?? NO_RESOURCES });
  const rules: InspectRule[] = [];
  for (const type of [...POLICY_TYPES].sort()) {
    const rule: InspectRule = { type, toRules: [], toResourceRules: [], fromRules: [], inboundRules: [], warnings: [] };
    if (type === "MeshHTTPRoute") outboundRules(snap, rule);
    else for (const ib of snap.inbounds) inboundRules(ib, type, rule, snap.traits);
    if (type === "MeshTrafficPermission" && snap.mtls === false && (rule.fromRules.length > 0 || rule.inboundRules.length > 0)) {
      rule.warnings.push("Mesh is not Mtls enabled this policy will have no effect");
    }
    if (rule.toRules.length + rule.toResourceRules.length + rule.fromRules.length + rule.inboundRules.length > 0) rules.push(rule);
  }
  return { resource: dataplaneMeta(dp), rules, httpMatches: [] };
}

function inboundRules(ib: InboundPlan, type: PolicyType, out: InspectRule, traits: VersionTraits): void {
  const inbound = inspectInbound(ib.inbound);
  const from = ib.from[type as keyof InboundPlan["from"]];
  if (from) {
    const built = buildRules(from.items, groupingOf(traits)).rules;
    const byName = new Map(from.policies.map((p) => [p.name, p]));
    out.fromRules.push({
      inbound,
      rules: built.map((r) => ({ matchers: r.subset.map((t) => ({ key: t.key, value: t.value, not: t.not })), conf: r.conf, origin: r.origin.map((n) => policyMeta(byName.get(n)!)) })),
    });
  }
  const plan = ib.rules[type as keyof InboundPlan["rules"]];
  if (plan) {
    out.inboundRules.push({
      inbound,
      rules: plan.rules.map((r) => ({ conf: [r.conf], match: r.matches?.length === 1 ? r.matches[0] : (r.matches ?? null), origin: [{ resourceMeta: policyMeta(r.policy), ruleIndex: r.ruleIndex }] })),
    });
  }
}

function outboundRules(snap: Snapshot, out: InspectRule): void {
  const plan = snap.outbound;
  if (plan.routes.length === 0) return;
  const confOf = (service: string, dest?: Parameters<typeof routeTableFor>[2]) =>
    routeTableFor(plan, service, dest).rules.map((r) => ({ matches: r.matches, default: r.default }));
  if (plan.meshEntries.length > 0) out.toRules.push({ matchers: [], conf: { rules: confOf("") }, origin: [...new Set(plan.meshEntries.map((e) => e.policy))].map(policyMeta) });
  for (const [service, entries] of [...plan.byService].sort(([a], [b]) => (a < b ? -1 : 1))) {
    out.toRules.push({ matchers: [{ key: "kuma.io/service", value: service, not: false }], conf: { rules: confOf(service) }, origin: [...new Set(entries.map((e) => e.policy))].map(policyMeta) });
  }
  for (const service of [...plan.resources.services].filter((s) => s.mesh === snap.dataplane.mesh).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    for (const port of service.ports) {
      const dest = { service, port, key: `${service.kind}/${service.name}:${portSectionName(port)}` };
      const table = routeTableFor(plan, service.name, dest);
      if (table.rules.every((r) => r.sources.length === 0)) continue;
      const origin = mergeOrderOrigins([...plan.meshEntries, ...plan.entries.filter((e) => refResolvesTo(e.item.targetRef, e.policy, dest))], snap.traits);
      out.toResourceRules.push({ resourceMeta: serviceMeta(service), resourceSectionName: portSectionName(port), conf: [{ rules: confOf(service.name, dest) }], origin });
    }
  }
}

/** One `to[]` entry of a policy, as the merge order sees it (a RouteEntry is one). */
export interface ToEntry {
  policy: Policy;
  toIndex: number;
  item: { targetRef: TargetRef };
}

/**
 * `to` entries in the order Kuma merges them (rules/outbound/sort.go: the policy's attributes, then the entry's
 * targetRef kind, a MeshService entry with a sectionName after one without, then display name): the last wins.
 */
export function mergeOrder<E extends ToEntry>(entries: readonly E[], traits: VersionTraits): E[] {
  const attributes = byPolicyAttributes(traits);
  const names = byDisplayName(traits);
  const kind = (e: E) => traits.kindRank[e.item.targetRef.kind] ?? 0;
  const section = (e: E) => Number(e.item.targetRef.kind === "MeshService" && !!e.item.targetRef.sectionName);
  return [...entries].sort((a, b) => attributes(a.policy, b.policy) || kind(a) - kind(b) || section(a) - section(b) || names(a.policy, b.policy));
}

/** A to-resource rule's `origin`: its `to` entries in merge order, once per policy and index (common/origin.go keeps the first of each). */
export function mergeOrderOrigins(entries: readonly ToEntry[], traits: VersionTraits): RuleOrigin[] {
  const seen = new Map<string, RuleOrigin>();
  for (const e of mergeOrder(entries, traits)) {
    const key = `${e.policy.type}/${e.policy.mesh}/${e.policy.name}/${e.toIndex}`;
    if (!seen.has(key)) seen.set(key, { resourceMeta: policyMeta(e.policy), ruleIndex: e.toIndex });
  }
  return [...seen.values()];
}

function inspectInbound(ib: Inbound): InspectInbound {
  return { ...(ib.declaredName !== undefined ? { name: ib.declaredName } : {}), tags: { ...ib.tags }, port: ib.port ?? 0 };
}

/** Kuma's InspectDataplanesForPolicy: `{total, items: Meta[]}` of the dataplanes the policy's top-level targetRef selects. */
export function dataplanesForPolicy(policy: Policy, dataplanes: readonly Dataplane[], opts: Pick<InspectOptions, "kumaVersion"> & { routes?: readonly Policy[] } = {}): { total: number; items: Meta[] } {
  const traits = versionTraits(opts.kumaVersion);
  const routes = new Map((opts.routes ?? []).filter((p) => p.type === "MeshHTTPRoute" && p.mesh === policy.mesh).map((p) => [p.name, p]));
  const items = dataplanes.filter((dp) => policySelectsDataplane(policy, dp, { traits, routes })).map(dataplaneMeta).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { total: items.length, items };
}

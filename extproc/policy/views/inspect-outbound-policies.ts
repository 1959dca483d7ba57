// Kuma 2.12+'s per-outbound and per-route policy views as pure functions (`matchedPoliciesToOutboundPolicy` and
// `matchedPoliciesToRouteConfig` in pkg/api-server/resource_endpoints.go at v2.14.3; PoliciesList of
// api/openapi/specs/common/resource.yaml): `GET …/_outbounds/{kri}/_policies` and
// `…/_outbounds/{kri}/_routes/{route-kri}/_policies`. Each kind shows the to-resource rule of the most specific
// resource that has one (ResourceContext.ResourceRule in pkg/plugins/policies/core/rules/outbound/context.go:
// the route, the service port, the service, the Mesh), its conf merged and its origins in merge order.
import { compile, routeTableFor, type Snapshot } from "../plans/compile.js";
import type { Dataplane } from "../model/dataplane.js";
import { NO_RESOURCES } from "../documents/resources.js";
import { refResolvesTo } from "../plans/destinations.js";
import { mergeConfs } from "../selection/merge.js";
import { policySelectsDataplane } from "../selection/match.js";
import { routesOf } from "../selection/policy-set.js";
import type { DirectionalItem, Policy, PolicyType } from "../model/types.js";
import { mergeOrder, mergeOrderOrigins, type InspectOptions, type RuleOrigin, type ToEntry } from "./inspect.js";
import { INSPECT_ORDER, withDefaultWeights } from "./inspect-rules.js";
import { outboundDestination, type Kri } from "./inspect-policies.js";

/** Kuma's PolicyConf: one kind's merged conf (a list of one) and the policies it came from, by KRI. */
export interface PolicyConf {
  conf: unknown[];
  kind: PolicyType;
  origins: Array<{ kri: string }>;
}

/**
 * `_outbounds/{kri}/_policies`: per kind in plugin order, the rule for the service port the KRI names — the
 * MeshHTTPRoute rules towards it (as `_rules` shows them), and the Mesh-wide `to` confs of MeshFaultInjection
 * and MeshRateLimit (their only `to` kind), which every outbound inherits whether or not the KRI names a known
 * service.
 */
export function outboundPolicies(policies: readonly Policy[], dp: Dataplane, outbound: Kri, opts: InspectOptions = {}): { policies: PolicyConf[] } {
  const snap = compile(policies, dp, 0, { kumaVersion: opts.kumaVersion, resources: opts.resources ?? NO_RESOURCES });
  return { policies: INSPECT_ORDER.flatMap((kind) => (kind === "MeshHTTPRoute" ? routeConf(snap, outbound) : meshWideConf(snap, kind)) ?? []) };
}

/**
 * `_outbounds/{kri}/_routes/{route-kri}/_policies`: the same for one route, route kinds left out. No kind meshext
 * decides can name a route or a service in `to` (MeshFaultInjection and MeshRateLimit take only Mesh there,
 * MeshTrafficPermission has no `to`), so each kind's Mesh-wide rule is what the route falls back to, for any
 * well-formed outbound and route KRI (Kuma does not check that they exist either).
 */
export function routePolicies(policies: readonly Policy[], dp: Dataplane, opts: InspectOptions = {}): { policies: PolicyConf[] } {
  const snap = compile(policies, dp, 0, { kumaVersion: opts.kumaVersion, resources: opts.resources ?? NO_RESOURCES });
  return { policies: INSPECT_ORDER.flatMap((kind) => (kind === "MeshHTTPRoute" ? undefined : meshWideConf(snap, kind)) ?? []) };
}

/** The MeshHTTPRoute rule towards the outbound's service port, if a known service is meant and a route reaches it. */
function routeConf(snap: Snapshot, outbound: Kri): PolicyConf | undefined {
  const plan = snap.outbound;
  const dest = outboundDestination(plan, outbound);
  if (!dest || plan.routes.length === 0) return undefined;
  const table = routeTableFor(plan, dest.service.name, dest);
  if (table.rules.every((r) => r.sources.length === 0)) return undefined;
  const entries = [...plan.meshEntries, ...plan.entries.filter((e) => refResolvesTo(e.item.targetRef, e.policy, dest))];
  const conf = withDefaultWeights({ rules: table.rules.map((r) => ({ matches: r.matches, default: r.default })) });
  return { conf: [conf], kind: "MeshHTTPRoute", origins: kris(mergeOrderOrigins(entries, snap.traits)) };
}

/** The `to: [{targetRef: {kind: Mesh}}]` entries of the kind's policies selecting this proxy (shadowed ones left out), merged in Kuma's order. */
function meshWideConf(snap: Snapshot, kind: PolicyType): PolicyConf | undefined {
  const { traits, dataplane } = snap;
  const routes = routesOf(snap.policies, dataplane.mesh);
  const entries: Array<ToEntry & { item: DirectionalItem }> = [];
  for (const policy of snap.policies) {
    if (policy.type !== kind || policy.mesh !== dataplane.mesh || (policy.shadow && traits.shadowEffect)) continue;
    if (!policySelectsDataplane(policy, dataplane, { traits, routes })) continue;
    (policy.spec.to ?? []).forEach((item, toIndex) => {
      if (item.targetRef.kind === "Mesh") entries.push({ policy, toIndex, item: item as DirectionalItem });
    });
  }
  if (entries.length === 0) return undefined;
  const conf = mergeConfs(mergeOrder(entries, traits).map((e) => e.item.default ?? {}));
  return { conf: [conf], kind, origins: kris(mergeOrderOrigins(entries, traits)) };
}

function kris(origins: readonly RuleOrigin[]): Array<{ kri: string }> {
  return origins.map((o) => ({ kri: o.resourceMeta.kri! }));
}

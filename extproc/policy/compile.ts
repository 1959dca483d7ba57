// Compiles a policy set for the local dataplane once per change: per inbound and kind, the selecting policies
// in precedence order and their `from` items indexed by tag; for outbound, MeshHTTPRoute `to` items indexed
// by destination service. A decision then touches only what selects this proxy.
import type { Dataplane, Inbound } from "./dataplane.js";
import { buildFromPlan, type FromPlan } from "./from-items.js";
import { selectedInbounds } from "./match.js";
import { sortByPrecedence, type Compat } from "./precedence.js";
import { mergeRouteRules, type MergedRouteRule, type RouteEntry } from "./routes.js";
import { policyKey, type Policy, type PolicyType, type RouteToItem } from "./types.js";

export type FromKind = Exclude<PolicyType, "MeshHTTPRoute">;
export const FROM_KINDS: readonly FromKind[] = ["MeshTrafficPermission", "MeshFaultInjection", "MeshRateLimit"];

export interface InboundPlan {
  inbound: Inbound;
  /** Present only when at least one policy of that kind selects the inbound. */
  from: Partial<Record<FromKind, FromPlan>>;
}

export interface OutboundPlan {
  /** MeshHTTPRoutes selecting any inbound of this proxy, ascending priority. */
  routes: Policy[];
  byService: Map<string, RouteEntry[]>;
  meshEntries: RouteEntry[];
  merged: Map<string, MergedRouteRule[]>;
}

export interface Snapshot {
  version: number;
  dataplane: Dataplane;
  policies: Policy[];
  inbounds: InboundPlan[];
  outbound: OutboundPlan;
  /** Policies of this mesh that select no inbound of this proxy. */
  unselected: number;
  /** Policies of other meshes. */
  otherMesh: number;
  /** Duplicated type/mesh/name: the later one in the input replaced the earlier. */
  duplicates: string[];
}

const MERGED_ROUTE_CACHE = 4096;

export function compile(input: readonly Policy[], dataplane: Dataplane, version: number, compat: Compat = "2.6"): Snapshot {
  const { policies, duplicates } = dedupe(input);
  const routesByName = routesOf(policies, dataplane.mesh);
  const perInbound = dataplane.inbounds.map(() => new Map<FromKind, Policy[]>());
  const routes: Policy[] = [];
  let unselected = 0;
  let otherMesh = 0;
  for (const p of policies) {
    if (p.mesh !== dataplane.mesh) {
      otherMesh++;
      continue;
    }
    const selected = selectedInbounds(p, dataplane, routesByName);
    if (selected.length === 0) {
      unselected++;
      continue;
    }
    if (p.type === "MeshHTTPRoute") {
      routes.push(p);
      continue;
    }
    for (const ib of selected) {
      const byKind = perInbound[dataplane.inbounds.indexOf(ib)]!;
      if (!byKind.has(p.type)) byKind.set(p.type, []);
      byKind.get(p.type)!.push(p);
    }
  }
  const inbounds = dataplane.inbounds.map((inbound, i) => {
    const from: InboundPlan["from"] = {};
    for (const [kind, list] of perInbound[i]!) from[kind] = buildFromPlan(kind, sortByPrecedence(list, compat));
    return { inbound, from };
  });
  return { version, dataplane, policies, inbounds, outbound: outboundPlan(sortByPrecedence(routes, compat)), unselected, otherMesh, duplicates };
}

function outboundPlan(routes: Policy[]): OutboundPlan {
  const plan: OutboundPlan = { routes, byService: new Map(), meshEntries: [], merged: new Map() };
  for (const policy of routes) {
    (policy.spec.to ?? []).forEach((raw, toIndex) => {
      const entry: RouteEntry = { policy, toIndex, item: raw as RouteToItem };
      const ref = raw.targetRef;
      if (ref.kind === "Mesh") plan.meshEntries.push(entry);
      else if (ref.kind === "MeshService" && ref.name) {
        if (!plan.byService.has(ref.name)) plan.byService.set(ref.name, []);
        plan.byService.get(ref.name)!.push(entry);
      }
    });
  }
  return plan;
}

/** Merged route rules towards `service` (Mesh entries plus that service's, in priority order), cached. */
export function routeRulesFor(plan: OutboundPlan, service: string): MergedRouteRule[] {
  const cached = plan.merged.get(service);
  if (cached) return cached;
  const rank = new Map(plan.routes.map((p, i) => [p, i]));
  const entries = [...plan.meshEntries, ...(plan.byService.get(service) ?? [])].sort(
    (a, b) => rank.get(a.policy)! - rank.get(b.policy)! || a.toIndex - b.toIndex,
  );
  const merged = mergeRouteRules(entries);
  if (plan.merged.size >= MERGED_ROUTE_CACHE) plan.merged.clear();
  plan.merged.set(service, merged);
  return merged;
}

/** MeshHTTPRoutes of `mesh` by name: what a top-level targetRef of kind MeshHTTPRoute resolves against. */
export function routesOf(policies: readonly Policy[], mesh: string): Map<string, Policy> {
  return new Map(policies.filter((p) => p.type === "MeshHTTPRoute" && p.mesh === mesh).map((p) => [p.name, p]));
}

/** One policy per type/mesh/name, the later in the input replacing the earlier in place (order kept). */
export function dedupe(input: readonly Policy[]): { policies: Policy[]; duplicates: string[] } {
  const byKey = new Map<string, Policy>();
  const duplicates: string[] = [];
  for (const p of input) {
    const key = policyKey(p);
    if (byKey.has(key)) duplicates.push(key);
    byKey.set(key, p);
  }
  return { policies: [...byKey.values()], duplicates };
}

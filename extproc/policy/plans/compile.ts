// Compiles a policy set for the local dataplane once per change: per inbound and kind, the selecting policies
// in precedence order and their `from` items indexed by tag; for outbound, MeshHTTPRoute `to` items indexed
// by destination service. A decision then touches only what selects this proxy.
import type { Explanation } from "../../decision.js";
import type { Dataplane, Inbound } from "../model/dataplane.js";
import { buildFromPlan, type FromPlan } from "./from-items.js";
import { groupingOf } from "./subset-groups.js";
import { buildRulesPlan, type RulesPlan } from "./inbound-rules.js";
import { DEFAULT_KUMA_VERSION, versionTraits, type KumaVersion, type VersionTraits } from "../model/kuma-version.js";
import { selectedInbounds } from "../selection/match.js";
import { sortByPrecedence } from "../selection/precedence.js";
import { dataplaneIdentity, trustedDomains } from "../documents/mesh-identity.js";
import { meshMtls, NO_RESOURCES, type MeshResources } from "../documents/resources.js";
import { refResolvesTo, type Destination } from "./destinations.js";
import { mergeRouteRules, routeTable, type RouteEntry, type RouteTable } from "./routes.js";
import { POLICY_TYPES, type Policy, type PolicyType, type RouteToItem } from "../model/types.js";
import { dedupe, routesOf } from "../selection/policy-set.js";
import { reuseOrBuild } from "./reuse.js";

export type FromKind = Exclude<PolicyType, "MeshHTTPRoute">;
export const FROM_KINDS: readonly FromKind[] = POLICY_TYPES.filter((t): t is FromKind => t !== "MeshHTTPRoute");

export interface InboundPlan {
  inbound: Inbound;
  /** Legacy `from` path: present when a policy of that kind selects the inbound and the kind has no rules here. */
  from: Partial<Record<FromKind, FromPlan>>;
  /** 2.10+ `rules` path: present when a selecting policy of that kind has `rules` (it then replaces `from`). */
  rules: Partial<Record<FromKind, RulesPlan>>;
  /** A decision's explanation when no MeshTrafficPermission applies on this inbound. */
  noMtp: Explanation;
}

export interface OutboundPlan {
  /** MeshHTTPRoutes selecting any inbound of this proxy, ascending priority. */
  routes: Policy[];
  /** Legacy destinations: `to[].targetRef: {kind: MeshService, name}` by kuma.io/service name. */
  byService: Map<string, RouteEntry[]>;
  meshEntries: RouteEntry[];
  /** Every non-Mesh `to[]` entry, for resolution against real service resources. */
  entries: RouteEntry[];
  merged: Map<string, RouteTable>;
  /** 2.7+: routes ordered by match specificity; up to 2.7 header values split on commas. */
  specificity: boolean;
  splitHeaderValues: boolean;
  resources: MeshResources;
  mesh: string;
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
  /** The Kuma version whose semantics this snapshot follows, and its row of the version table. */
  kumaVersion: KumaVersion;
  traits: VersionTraits;
  /** The resources given with the policies (Mesh, services). */
  resources: MeshResources;
  /** The Mesh resource's mTLS state; undefined when no Mesh resource for this mesh was given. */
  mtls?: boolean;
  /** The MeshIdentity this proxy gets (2.12+), if any. */
  identity?: string;
  /** Peer trust domains the MeshTrusts allow this proxy (2.12+, with an identity); undefined: not restricted. */
  trustDomains?: ReadonlySet<string>;
  /** `kuma.io/effect: shadow` policies selecting this proxy: inspection only (2.7+). */
  shadowed: Policy[];
}

export interface CompileOptions {
  kumaVersion?: KumaVersion;
  resources?: MeshResources;
  /** The snapshot in force: its plans whose inputs are unchanged are reused (plans/reuse.ts). */
  previous?: Snapshot;
}

const MERGED_ROUTE_CACHE = 4096;
/** Stands for "no rules plan" where reuseOrBuild needs an object. */
const NO_RULES = {} as RulesPlan;

export function compile(input: readonly Policy[], dataplane: Dataplane, version: number, opts: CompileOptions = {}): Snapshot {
  const kumaVersion = opts.kumaVersion ?? DEFAULT_KUMA_VERSION;
  const traits = versionTraits(kumaVersion);
  const resources = opts.resources ?? NO_RESOURCES;
  const { policies, duplicates } = dedupe(input);
  const routesByName = routesOf(policies, dataplane.mesh);
  const perInbound = dataplane.inbounds.map(() => new Map<FromKind, Policy[]>());
  const routes: Policy[] = [];
  const shadowed: Policy[] = [];
  let unselected = 0;
  let otherMesh = 0;
  const selectContext = { traits, routes: routesByName };
  // Indexed loops over the set (here and in what a set's apply runs per policy): applies are rare, so this code
  // often runs unoptimized, where a for-of makes an iterator result per step.
  for (let n = 0; n < policies.length; n++) {
    const p = policies[n]!;
    if (p.mesh !== dataplane.mesh) {
      otherMesh++;
      continue;
    }
    const selected = selectedInbounds(p, dataplane, selectContext);
    if (selected.length === 0) {
      unselected++;
      continue;
    }
    if (p.shadow && traits.shadowEffect) {
      shadowed.push(p);
      continue;
    }
    if (p.type === "MeshHTTPRoute") {
      routes.push(p);
      continue;
    }
    for (let s = 0; s < selected.length; s++) {
      const byKind = perInbound[dataplane.inbounds.indexOf(selected[s]!)]!;
      if (!byKind.has(p.type)) byKind.set(p.type, []);
      byKind.get(p.type)!.push(p);
    }
  }
  // Plans of the previous snapshot can stand in only when it was compiled for this dataplane and version.
  const prev = opts.previous?.dataplane === dataplane && opts.previous.kumaVersion === kumaVersion ? opts.previous : undefined;
  const inbounds = dataplane.inbounds.map((inbound, i) => {
    const noMtp: Explanation = { action: "allow", kind: "none", reason: `no MeshTrafficPermission selects inbound ${inbound.name}` };
    const plan: InboundPlan = { inbound, from: {}, rules: {}, noMtp };
    const before = prev?.inbounds[i];
    for (const [kind, list] of perInbound[i]!) {
      const sorted = sortByPrecedence(list, traits);
      const rules = traits.rulesKinds.has(kind) ? reuseOrBuild(before?.rules[kind], sorted, () => buildRulesPlan(kind, sorted, traits.ruleMatchExpansion) ?? NO_RULES) : NO_RULES;
      if (rules !== NO_RULES) plan.rules[kind] = rules;
      else plan.from[kind] = reuseOrBuild(before?.from[kind], sorted, () => buildFromPlan(kind, sorted, groupingOf(traits), before?.from[kind]));
    }
    return plan;
  });
  const sortedRoutes = sortByPrecedence(routes, traits);
  const outbound = reuseOrBuild(prev?.outbound, sortedRoutes, () => outboundPlan(sortedRoutes, traits, resources, dataplane.mesh), JSON.stringify([dataplane.mesh, resources]));
  const mtls = meshMtls(resources, dataplane.mesh);
  const snap: Snapshot = { version, dataplane, policies, inbounds, outbound, unselected, otherMesh, duplicates, kumaVersion, traits, resources, shadowed };
  // Kuma 3.0 reads no Mesh.mtls: mTLS (and with it MeshTrafficPermission) comes from a MeshIdentity only.
  if (mtls !== undefined && traits.mtlsFrom === "mesh") snap.mtls = mtls;
  const identity = traits.meshIdentity ? dataplaneIdentity(resources.identities ?? [], dataplane) : undefined;
  if (identity) snap.identity = identity.name;
  const trustDomains = trustedDomains(resources.trusts ?? [], identity, dataplane.mesh);
  if (trustDomains) snap.trustDomains = trustDomains;
  return snap;
}

function outboundPlan(routes: Policy[], traits: VersionTraits, resources: MeshResources, mesh: string): OutboundPlan {
  const plan: OutboundPlan = {
    routes,
    byService: new Map(),
    meshEntries: [],
    entries: [],
    merged: new Map(),
    specificity: traits.routeSpecificitySort,
    splitHeaderValues: traits.routeHeaderCommaSplit,
    resources,
    mesh,
  };
  for (const policy of routes) {
    (policy.spec.to ?? []).forEach((raw, toIndex) => {
      const entry: RouteEntry = { policy, toIndex, item: raw as RouteToItem };
      const ref = raw.targetRef;
      if (ref.kind === "Mesh") plan.meshEntries.push(entry);
      else plan.entries.push(entry);
      if (ref.kind === "MeshService" && ref.name && ref.labels === undefined && ref.sectionName === undefined) {
        if (!plan.byService.has(ref.name)) plan.byService.set(ref.name, []);
        plan.byService.get(ref.name)!.push(entry);
      }
    });
  }
  return plan;
}

/**
 * Route table towards a destination: Mesh entries plus the entries that name it — a real resource when
 * `dest` is given (its refs resolved), else a kuma.io/service name — merged in priority order, cached.
 */
export function routeTableFor(plan: OutboundPlan, service: string, dest?: Destination): RouteTable {
  const key = dest ? dest.key : `service/${service}`;
  const cached = plan.merged.get(key);
  if (cached) return cached;
  const rank = new Map(plan.routes.map((p, i) => [p, i]));
  const named = dest ? plan.entries.filter((e) => refResolvesTo(e.item.targetRef, e.policy, dest)) : (plan.byService.get(service) ?? []);
  const entries = [...plan.meshEntries, ...named].sort((a, b) => rank.get(a.policy)! - rank.get(b.policy)! || a.toIndex - b.toIndex);
  const table = routeTable(mergeRouteRules(entries), plan.specificity);
  if (plan.merged.size >= MERGED_ROUTE_CACHE) plan.merged.clear();
  plan.merged.set(key, table);
  return table;
}

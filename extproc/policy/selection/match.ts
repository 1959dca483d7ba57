// Does a targetRef apply: top-level refs against the local dataplane's inbounds (2.6 kinds and the 2.10+
// Dataplane kind with 2.9+ namespace/zone scoping), and
// `from`/`to` refs as tag subsets against a client's or destination's multi-valued tags (asSubset and
// Rules.Compute in pkg/plugins/policies/core/rules/rules.go).
import { LABEL, SERVICE_TAG, type Dataplane, type Inbound } from "../model/dataplane.js";
import { versionTraits, type VersionTraits } from "../model/kuma-version.js";
import type { Policy, Tag, TagSet, TargetRef } from "../model/types.js";

/** What selection depends on besides the policy and the dataplane. */
export interface SelectContext {
  traits?: VersionTraits;
  /** Resolves a top-level `kind: MeshHTTPRoute` by name. */
  routes?: ReadonlyMap<string, Policy>;
}

/**
 * Whether a top-level targetRef selects this inbound (pkg/plugins/policies/core/matchers at 2.6;
 * DppSelectedByPolicy in matchers/dataplane.go at v2.14.3).
 * `policy` supplies what Dataplane-by-name refs are relative to (namespace, zone).
 */
export function selectsInbound(ref: TargetRef, inbound: Inbound, dp: Dataplane, ctx: SelectContext = {}, policy?: Policy): boolean {
  const traits = ctx.traits ?? versionTraits();
  switch (ref.kind) {
    case "Mesh":
      return proxyTypeMatches(ref, dp);
    case "Dataplane":
      return dp.proxyType !== "Gateway" && dataplaneMatches(ref, dp, policy) && sectionMatches(ref.sectionName, inbound, traits);
    case "MeshSubset":
      return proxyTypeMatches(ref, dp) && tagsContain(inbound.tags, ref.tags ?? {});
    case "MeshService":
      return ref.name !== undefined && inbound.tags[SERVICE_TAG] === ref.name;
    case "MeshServiceSubset":
      return inbound.tags[SERVICE_TAG] === ref.name && tagsContain(inbound.tags, ref.tags ?? {});
    case "MeshHTTPRoute": {
      const route = ref.name ? ctx.routes?.get(ref.name) : undefined;
      return route !== undefined && route.spec.targetRef.kind !== "MeshHTTPRoute" && selectsInbound(route.spec.targetRef, inbound, dp, ctx, route);
    }
    default:
      return false; // builtin gateways are out of scope for a sidecar's ext_proc; service kinds are not proxies
  }
}

/**
 * Inbounds of `dp` a policy's top-level targetRef selects: same mesh, the 2.9+ namespace and zone scoping of
 * the version, then the kind. Empty = the policy cannot select this dataplane.
 */
export function selectedInbounds(policy: Policy, dp: Dataplane, ctx: SelectContext = {}): readonly Inbound[] {
  const traits = scopeTraits(policy, dp, ctx);
  if (!traits) return NO_INBOUNDS;
  // Called for every policy of a set on every apply: no array is made when all inbounds or none are selected
  // (a sidecar's one inbound, as a rule); the answer is read-only.
  let selected: Inbound[] | undefined;
  const all = dp.inbounds;
  for (let i = 0; i < all.length; i++) {
    const hit = picks(policy, all[i]!, dp, ctx, traits);
    if (hit && selected) selected.push(all[i]!);
    else if (!hit && !selected) selected = all.slice(0, i);
  }
  return selected === undefined ? all : selected.length === 0 ? NO_INBOUNDS : selected;
}

const NO_INBOUNDS: readonly Inbound[] = Object.freeze([]);

/**
 * THE predicate "can this policy's top-level targetRef select this dataplane" (kind, name, tags, labels,
 * sectionName, proxyTypes, namespace and zone scope), both dialects; the engine's compile uses it. The same
 * checks as selectedInbounds, stopping at the first inbound selected.
 */
export function policySelectsDataplane(policy: Policy, dp: Dataplane, ctx: SelectContext = {}): boolean {
  const traits = scopeTraits(policy, dp, ctx);
  if (!traits) return false;
  const all = dp.inbounds;
  for (let i = 0; i < all.length; i++) if (picks(policy, all[i]!, dp, ctx, traits)) return true;
  return false;
}

/** The version's traits when `policy` may select inbounds of `dp` at all (same mesh, 2.9+ scope), else undefined. */
function scopeTraits(policy: Policy, dp: Dataplane, ctx: SelectContext): VersionTraits | undefined {
  if (policy.mesh !== dp.mesh) return undefined;
  const traits = ctx.traits ?? versionTraits();
  return traits.namespaceAndZoneScoping && !inScope(policy, dp) ? undefined : traits;
}

/** Whether the policy's top-level targetRef selects `ib` (an ignored inbound only where the version selects those). */
function picks(policy: Policy, ib: Inbound, dp: Dataplane, ctx: SelectContext, traits: VersionTraits): boolean {
  return (traits.ignoredInboundsSelected || !ib.ignored) && selectsInbound(policy.spec.targetRef, ib, dp, ctx, policy);
}

/** dppSelectedByNamespace and dppSelectedByZone (pkg/plugins/policies/core/matchers/dataplane.go, 2.9+). */
function inScope(policy: Policy, dp: Dataplane): boolean {
  const labels = dp.labels ?? {};
  if ((policy.role === "consumer" || policy.role === "workload-owner") && labels[LABEL.namespace] !== policy.k8sNamespace) return false;
  if (policy.role !== "producer" && labels[LABEL.origin] === "zone" && policy.origin === "zone" && policy.zone !== undefined) {
    const zone = labels[LABEL.zone];
    if (zone !== undefined && zone !== policy.zone) return false;
  }
  return true;
}

/** `kind: Dataplane`: all (no name/namespace/labels), by identity (name + namespace + the policy's zone), or by resource labels. */
function dataplaneMatches(ref: TargetRef, dp: Dataplane, policy?: Policy): boolean {
  const labels = dp.labels ?? {};
  if (ref.name === undefined && ref.namespace === undefined && ref.labels === undefined) return true;
  if (ref.name !== undefined) {
    const namespace = ref.namespace ?? policy?.k8sNamespace;
    return (labels[LABEL.displayName] ?? dp.name) === ref.name && labels[LABEL.namespace] === namespace && labels[LABEL.zone] === policy?.zone;
  }
  if (ref.labels === undefined) return false; // namespace alone selects nothing
  return Object.entries(ref.labels).every(([k, v]) => labels[k] === v);
}

/** `sectionName`: the inbound's name (2.10–2.11), or its name else its port as text (2.12+). */
function sectionMatches(section: string | undefined, inbound: Inbound, traits: VersionTraits): boolean {
  if (section === undefined) return true;
  if (traits.sectionNameMatches === "name") return inbound.declaredName === section;
  return (inbound.declaredName ?? (inbound.port !== undefined ? String(inbound.port) : undefined)) === section;
}

function proxyTypeMatches(ref: TargetRef, dp: Dataplane): boolean {
  return !ref.proxyTypes || ref.proxyTypes.length === 0 || ref.proxyTypes.includes(dp.proxyType);
}

/** Selector tags: exact value, or "*" for "key present with any value". */
function tagsContain(tags: Readonly<Record<string, string>>, selector: Readonly<Record<string, string>>): boolean {
  // for-in over own keys: Object.keys' order, without an array per call (this runs for every policy of a set).
  for (const k in selector) {
    if (!Object.hasOwn(selector, k)) continue;
    const v = selector[k]!;
    const have = tags[k];
    if (have === undefined || (v !== "*" && have !== v)) return false;
  }
  return true;
}

/** `asSubset` (core/rules/rules.go): the positive tags a from/to targetRef requires. Mesh → [] (everyone). */
export function asSubset(ref: TargetRef): Tag[] {
  const tags: Tag[] = [];
  if (ref.kind === "MeshService" || ref.kind === "MeshServiceSubset") tags.push({ key: SERVICE_TAG, value: ref.name ?? "", not: false });
  if (ref.kind === "MeshSubset" || ref.kind === "MeshServiceSubset") {
    for (const [key, value] of Object.entries(ref.tags ?? {})) tags.push({ key, value, not: false });
  }
  return tags;
}

/** RBAC/ContainsElement semantics: positive tag ⇒ value among the client's; negated ⇒ value absent. */
export function subsetMatches(subset: readonly Tag[], client: TagSet): boolean {
  for (const t of subset) {
    const has = client.get(t.key)?.has(t.value) ?? false;
    if (has === t.not) return false;
  }
  return true;
}

/** Builds a TagSet from plain single- or multi-valued tags. */
export function tagSet(tags: Readonly<Record<string, string | readonly string[]>>): TagSet {
  const m = new Map<string, Set<string>>();
  for (const [k, v] of Object.entries(tags)) m.set(k, new Set(typeof v === "string" ? [v] : v));
  return m;
}

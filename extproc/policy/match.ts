// Does a targetRef apply: top-level refs against the local dataplane's inbounds (reference §1.2), and
// `from`/`to` refs as tag subsets against a client's or destination's multi-valued tags (reference §3.2, §3.6).
import { SERVICE_TAG, type Dataplane, type Inbound } from "./dataplane.js";
import type { Policy, Tag, TagSet, TargetRef } from "./types.js";

/** Whether a top-level targetRef selects this inbound. `routes` resolves kind MeshHTTPRoute by name. */
export function selectsInbound(ref: TargetRef, inbound: Inbound, dp: Dataplane, routes: ReadonlyMap<string, Policy> = new Map()): boolean {
  switch (ref.kind) {
    case "Mesh":
      return proxyTypeMatches(ref, dp);
    case "MeshSubset":
      return proxyTypeMatches(ref, dp) && tagsContain(inbound.tags, ref.tags ?? {});
    case "MeshService":
      return inbound.tags[SERVICE_TAG] === ref.name;
    case "MeshServiceSubset":
      return inbound.tags[SERVICE_TAG] === ref.name && tagsContain(inbound.tags, ref.tags ?? {});
    case "MeshGateway":
      return false; // builtin gateways are out of scope for a sidecar's ext_proc
    case "MeshHTTPRoute": {
      const route = ref.name ? routes.get(ref.name) : undefined;
      return route !== undefined && route.spec.targetRef.kind !== "MeshHTTPRoute" && selectsInbound(route.spec.targetRef, inbound, dp, routes);
    }
  }
}

/**
 * Whether a policy's top-level targetRef can select this dataplane at all (any inbound): the one predicate the
 * selection filter (select.ts) and compile() share. A policy for which it is false never changes a decision.
 */
export function selectsDataplane(policy: Policy, dp: Dataplane, routes?: ReadonlyMap<string, Policy>): boolean {
  return selectedInbounds(policy, dp, routes).length > 0;
}

/** Inbounds of `dp` selected by a policy's top-level targetRef (policies of another mesh select none). */
export function selectedInbounds(policy: Policy, dp: Dataplane, routes?: ReadonlyMap<string, Policy>): Inbound[] {
  if (policy.mesh !== dp.mesh) return [];
  return dp.inbounds.filter((ib) => selectsInbound(policy.spec.targetRef, ib, dp, routes));
}

function proxyTypeMatches(ref: TargetRef, dp: Dataplane): boolean {
  return !ref.proxyTypes || ref.proxyTypes.length === 0 || ref.proxyTypes.includes(dp.proxyType);
}

/** Selector tags: exact value, or "*" for "key present with any value". */
function tagsContain(tags: Readonly<Record<string, string>>, selector: Readonly<Record<string, string>>): boolean {
  for (const [k, v] of Object.entries(selector)) {
    const have = tags[k];
    if (have === undefined || (v !== "*" && have !== v)) return false;
  }
  return true;
}

/** `asSubset` (reference §3.2): the positive tags a from/to targetRef requires. Mesh → [] (everyone). */
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

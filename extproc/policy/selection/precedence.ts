// Orders policies that select the same proxy or inbound, lowest priority first: the last policy wins when
// `default` confs are merged. Keys (SortByTargetRef / CompareByPolicyAttributes at v2.14.3; 2.6 ByTargetRef):
// kind rank, Dataplane sub-keys, origin, MeshGateway listener tags, policy role, display name — each as the
// Kuma version in force defines it (kuma-version.ts).
import { DEFAULT_KUMA_VERSION, versionTraits, type KumaVersion, type VersionTraits } from "../model/kuma-version.js";
import type { Policy, PolicyRole, TargetRef } from "../model/types.js";

/** `global` < unset < `zone` (label kuma.io/origin). */
export function originRank(p: Pick<Policy, "origin">): number {
  return p.origin === "global" ? 0 : p.origin === "zone" ? 2 : 1;
}

export type PolicyComparator = (a: Policy, b: Policy) => number;

const ROLE_RANK: Readonly<Record<PolicyRole, number>> = { system: 1, producer: 2, consumer: 3, "workload-owner": 4 };

export function byPrecedence(version: KumaVersion | VersionTraits = DEFAULT_KUMA_VERSION): PolicyComparator {
  const traits = typeof version === "string" ? versionTraits(version) : version;
  const attributes = byPolicyAttributes(traits);
  return (a, b) => attributes(a, b) || compareNames(a.displayName, b.displayName, traits);
}

/**
 * Every key but the display name (Kuma's CompareByPolicyAttributes): Kuma sorts `to` entries by these, then by
 * the entry's own targetRef kind, and only then by name (rules/outbound/sort.go).
 */
export function byPolicyAttributes(traits: VersionTraits): PolicyComparator {
  const rank = (p: Policy): number => traits.kindRank[p.spec.targetRef.kind] ?? 0;
  return (a, b) =>
    rank(a) - rank(b) ||
    compareDataplaneRefs(a.spec.targetRef, b.spec.targetRef) ||
    originRank(a) - originRank(b) ||
    gatewayTagCount(a) - gatewayTagCount(b) ||
    roleRank(a, traits) - roleRank(b, traits);
}

/** The display-name key alone, as `byPrecedence` applies it last. */
export function byDisplayName(traits: VersionTraits): PolicyComparator {
  return (a, b) => compareNames(a.displayName, b.displayName, traits);
}

/** Sorted copy, ascending priority (the last element wins). */
export function sortByPrecedence(policies: readonly Policy[], version: KumaVersion | VersionTraits = DEFAULT_KUMA_VERSION): Policy[] {
  return [...policies].sort(byPrecedence(version));
}

/** CompareDataplaneKind: a `name` ref beats a `labels` ref (only that pair), then with `sectionName` beats without. */
function compareDataplaneRefs(a: TargetRef, b: TargetRef): number {
  if (a.kind !== "Dataplane" || b.kind !== "Dataplane") return 0;
  const by = (r: TargetRef): "name" | "labels" | "all" => (r.name !== undefined ? "name" : r.labels !== undefined ? "labels" : "all");
  const [x, y] = [by(a), by(b)];
  if (x === "name" && y === "labels") return 1;
  if (x === "labels" && y === "name") return -1;
  return Number(a.sectionName !== undefined) - Number(b.sectionName !== undefined);
}

function roleRank(p: Policy, traits: VersionTraits): number {
  if (traits.roleOrder === "none") return 0;
  const r = ROLE_RANK[p.role];
  return traits.roleOrder === "three-level" ? Math.min(r, 3) : r;
}

function gatewayTagCount(p: Policy): number {
  const ref = p.spec.targetRef;
  return ref.kind === "MeshGateway" ? Object.keys(ref.tags ?? {}).length : 0;
}

function compareNames(a: string, b: string, traits: VersionTraits): number {
  if (a === b) return 0;
  const earlierFirst = a < b ? -1 : 1;
  return traits.nameWins === "earlier" ? -earlierFirst : earlierFirst;
}

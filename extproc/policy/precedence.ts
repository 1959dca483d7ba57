// Orders policies that select the same proxy, lowest priority first (reference §2.2, Kuma 2.6 ByTargetRef).
// The last policy wins when `default` confs are merged.
import type { Policy, TargetRefKind } from "./types.js";

export const KIND_RANK: Readonly<Record<TargetRefKind, number>> = {
  Mesh: 1,
  MeshSubset: 2,
  MeshGateway: 3,
  MeshService: 4,
  MeshServiceSubset: 5,
  MeshHTTPRoute: 6,
};

/** `global` < unset < `zone` (label kuma.io/origin). */
export function originRank(p: Pick<Policy, "origin">): number {
  return p.origin === "global" ? 0 : p.origin === "zone" ? 2 : 1;
}

/** "2.6": the lexicographically earlier display name wins; "2.5": the later one wins (before UPGRADE.md 2.6). */
export type Compat = "2.6" | "2.5";

export type PolicyComparator = (a: Policy, b: Policy) => number;

export function byPrecedence(compat: Compat = "2.6"): PolicyComparator {
  return (a, b) =>
    KIND_RANK[a.spec.targetRef.kind] - KIND_RANK[b.spec.targetRef.kind] ||
    originRank(a) - originRank(b) ||
    gatewayTagCount(a) - gatewayTagCount(b) ||
    compareNames(a.displayName, b.displayName, compat);
}

/** Sorted copy, ascending priority (the last element wins). */
export function sortByPrecedence(policies: readonly Policy[], compat: Compat = "2.6"): Policy[] {
  return [...policies].sort(byPrecedence(compat));
}

function gatewayTagCount(p: Policy): number {
  const ref = p.spec.targetRef;
  return ref.kind === "MeshGateway" ? Object.keys(ref.tags ?? {}).length : 0;
}

function compareNames(a: string, b: string, compat: Compat): number {
  if (a === b) return 0;
  const earlierFirst = a < b ? -1 : 1;
  return compat === "2.6" ? -earlierFirst : earlierFirst;
}

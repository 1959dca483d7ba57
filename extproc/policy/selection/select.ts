// The selection filter: of a validated mesh-wide policy set, keep only what can select this dataplane, so a
// sidecar's memory and compile time grow with what selects it, not with the mesh. Pure; property-tested
// (test/policy/select.test.ts) to decide exactly as the unfiltered set does.
import { dedupe, knownDistinct, routesOf } from "./policy-set.js";
import type { Dataplane } from "../model/dataplane.js";
import { versionTraits, type KumaVersion } from "../model/kuma-version.js";
import { policySelectsDataplane } from "./match.js";
import type { Policy } from "../model/types.js";

export interface Selection {
  /** The policies that can select this dataplane, in input order (duplicates resolved as compile() does). */
  kept: Policy[];
  /** Distinct policies (type/mesh/name) in the input. */
  total: number;
}

/** Counts shown in metrics and /explain: `total` policies delivered by the source, `kept` compiled. */
export interface SelectionCounts {
  kept: number;
  total: number;
}

/**
 * Keeps the policies whose top-level targetRef can select `dp` as Kuma `kumaVersion` selects (both dialects:
 * kind, name, tags, labels, sectionName, proxy types, namespace and zone scope — match.ts's
 * policySelectsDataplane, the predicate compile() uses). Duplicates are resolved first (a later non-selecting
 * duplicate must still replace an earlier selecting one), and a targetRef naming a MeshHTTPRoute resolves
 * against the whole set.
 */
export function selectForDataplane(policies: readonly Policy[], dp: Dataplane, kumaVersion?: KumaVersion): Selection {
  const { policies: distinct } = dedupe(policies);
  const ctx = { traits: versionTraits(kumaVersion), routes: routesOf(distinct, dp.mesh) };
  return { kept: knownDistinct(distinct.filter((p) => policySelectsDataplane(p, dp, ctx))), total: distinct.length };
}

/**
 * A per-policy, conservative form for sources that filter file by file: false only when the policy
 * cannot select `dp` whatever else is in the set (a targetRef naming a route is kept for the exact pass).
 */
export function mightSelect(policy: Policy, dp: Dataplane, kumaVersion?: KumaVersion): boolean {
  if (policy.mesh !== dp.mesh) return false;
  return policy.spec.targetRef.kind === "MeshHTTPRoute" || policySelectsDataplane(policy, dp, { traits: versionTraits(kumaVersion) });
}

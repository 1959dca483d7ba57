// The policy set as selection and compilation first see it: one policy per type/mesh/name (a later copy
// replaces an earlier one in place), and a mesh's MeshHTTPRoutes by name for targetRefs of that kind.
import { policyKey, type Policy } from "../model/types.js";

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

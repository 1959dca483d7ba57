// The policy set as selection and compilation first see it: one policy per type/mesh/name (a later copy
// replaces an earlier one in place), and a mesh's MeshHTTPRoutes by name for targetRefs of that kind.
import { policyKey, type Policy } from "../model/types.js";

/** MeshHTTPRoutes of `mesh` by name: what a top-level targetRef of kind MeshHTTPRoute resolves against. */
export function routesOf(policies: readonly Policy[], mesh: string): Map<string, Policy> {
  return new Map(policies.filter((p) => p.type === "MeshHTTPRoute" && p.mesh === mesh).map((p) => [p.name, p]));
}

/** policyKey by policy object, checked against the fields it was made of (a set's policies recur on every apply). */
const keys = new WeakMap<Policy, { type: string; mesh: string; name: string; key: string }>();
function keyOf(p: Policy): string {
  const known = keys.get(p);
  if (known && known.type === p.type && known.mesh === p.mesh && known.name === p.name) return known.key;
  const key = policyKey(p);
  keys.set(p, { type: p.type, mesh: p.mesh, name: p.name, key });
  return key;
}

/** One policy per type/mesh/name, the later in the input replacing the earlier in place (order kept). */
export function dedupe(input: readonly Policy[]): { policies: Policy[]; duplicates: string[] } {
  const byKey = new Map<string, Policy>();
  const duplicates: string[] = [];
  for (const p of input) {
    const key = keyOf(p);
    if (byKey.has(key)) duplicates.push(key);
    byKey.set(key, p);
  }
  return { policies: [...byKey.values()], duplicates };
}

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

/** Lists made by dedupe's callers from a deduped list (select.ts's `kept`): nothing to resolve in them again. */
const distinctLists = new WeakSet<readonly Policy[]>();

/** Marks `list`, made by keeping some of a list dedupe returned (and never changed after), as having no duplicates. */
export function knownDistinct<T extends readonly Policy[]>(list: T): T {
  distinctLists.add(list);
  return list;
}

/** One policy per type/mesh/name, the later in the input replacing the earlier in place (order kept). */
export function dedupe(input: readonly Policy[]): { policies: Policy[]; duplicates: string[] } {
  if (distinctLists.has(input)) return { policies: input as Policy[], duplicates: [] };
  // As a rule there are none: a Set of the keys finds that, and the answer is a copy of the input.
  const seen = new Set<string>();
  for (let i = 0; i < input.length; i++) {
    const key = keyOf(input[i]!);
    if (seen.has(key)) return dedupeFound(input);
    seen.add(key);
  }
  return { policies: input.slice(), duplicates: [] };
}

function dedupeFound(input: readonly Policy[]): { policies: Policy[]; duplicates: string[] } {
  const byKey = new Map<string, Policy>();
  const duplicates: string[] = [];
  for (const p of input) {
    const key = keyOf(p);
    if (byKey.has(key)) duplicates.push(key);
    byKey.set(key, p);
  }
  return { policies: [...byKey.values()], duplicates };
}

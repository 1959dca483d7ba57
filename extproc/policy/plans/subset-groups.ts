// Which legacy `from` items Kuma enumerates together when it builds rules (buildRulesInternal in
// pkg/plugins/policies/core/rules/rules.go at v2.14.3): a graph with an edge between two items whose subsets
// can intersect, grouped by connected component (before kumahq/kuma #15412) or by maximal clique (after it),
// each group's item ids ascending, the groups ordered by their ids joined with ":", descending as text.
import type { Tag } from "../model/types.js";
import type { VersionTraits } from "../model/kuma-version.js";

export interface GroupingRules {
  /** Maximal cliques (#15412) instead of connected components. */
  cliques: boolean;
  /** Subset.Intersect skips a key the other side lacks (kumahq/kuma #12340); before, such a key meant "intersects". */
  intersectFixed: boolean;
}

export function groupingOf(traits: Pick<VersionTraits, "fromRulesCliques" | "subsetIntersectFixed">): GroupingRules {
  return { cliques: traits.fromRulesCliques, intersectFixed: traits.subsetIntersectFixed };
}

/** Above this many items, cliques are not enumerated (the components, a superset of each clique, stand in). */
export const MAX_CLIQUE_ITEMS = 64;

/** Groupings recently computed, by their input as text: an edit that leaves every subset as it was regroups nothing. */
const recentGroupings = new Map<string, ReadonlyArray<readonly number[]>>();
const RECENT_GROUPINGS = 256;

/** The groups (item ids ascending, in Kuma's order); the answer for a given input is computed once and shared (read-only). */
export function groupSubsets(subsets: readonly (readonly Tag[])[], rules: GroupingRules): ReadonlyArray<readonly number[]> {
  // The text JSON.stringify([cliques, intersectFixed, subsets as [not, key, value] triples]) gives, built from each
  // subset's own text, kept by subset: a plan rebuilt for one edited policy reads only that policy's subsets anew.
  const key = `[${rules.cliques},${rules.intersectFixed},[${subsets.map(subsetText).join(",")}]]`;
  const known = recentGroupings.get(key);
  if (known) return known;
  const groups = computeGroups(subsets, rules);
  if (recentGroupings.size >= RECENT_GROUPINGS) recentGroupings.clear();
  recentGroupings.set(key, groups);
  return groups;
}

const subsetTexts = new WeakMap<readonly Tag[], string>();

/** One subset as JSON text of its [not, key, value] triples (subsets are never changed once built). */
export function subsetText(subset: readonly Tag[]): string {
  let text = subsetTexts.get(subset);
  if (text === undefined) {
    text = JSON.stringify(subset.map((t) => [t.not, t.key, t.value]));
    subsetTexts.set(subset, text);
  }
  return text;
}

function computeGroups(subsets: readonly (readonly Tag[])[], rules: GroupingRules): number[][] {
  const n = subsets.length;
  const intersects = rules.intersectFixed ? intersect : intersectBeforeFix;
  const adjacent: Array<Set<number>> = subsets.map(() => new Set());
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      // Kuma asks both ways (i, j) and (j, i); the check before #12340 is not symmetric.
      if (intersects(subsets[i]!, subsets[j]!) || intersects(subsets[j]!, subsets[i]!)) {
        adjacent[i]!.add(j);
        adjacent[j]!.add(i);
      }
    }
  }
  const groups = rules.cliques && n <= MAX_CLIQUE_ITEMS ? maximalCliques(adjacent) : components(adjacent);
  for (const g of groups) g.sort((a, b) => a - b);
  const key = (g: number[]): string => g.join(":");
  return groups.sort((a, b) => (key(a) < key(b) ? 1 : key(a) > key(b) ? -1 : 0));
}

function components(adjacent: ReadonlyArray<ReadonlySet<number>>): number[][] {
  const seen = new Set<number>();
  const out: number[][] = [];
  for (let start = 0; start < adjacent.length; start++) {
    if (seen.has(start)) continue;
    const group: number[] = [];
    const stack = [start];
    seen.add(start);
    while (stack.length > 0) {
      const v = stack.pop()!;
      group.push(v);
      for (const w of adjacent[v]!) if (!seen.has(w)) (seen.add(w), stack.push(w));
    }
    out.push(group);
  }
  return out;
}

/** Bron–Kerbosch with a pivot: every maximal clique, an isolated item being a clique of one. */
function maximalCliques(adjacent: ReadonlyArray<ReadonlySet<number>>): number[][] {
  const out: number[][] = [];
  const expand = (r: number[], p: Set<number>, x: Set<number>): void => {
    if (p.size === 0 && x.size === 0) {
      out.push([...r]);
      return;
    }
    let pivot = -1;
    let best = -1;
    for (const u of [...p, ...x]) {
      let count = 0;
      for (const w of p) if (adjacent[u]!.has(w)) count++;
      if (count > best) (best = count), (pivot = u);
    }
    for (const v of [...p]) {
      if (pivot >= 0 && adjacent[pivot]!.has(v)) continue;
      const nv = adjacent[v]!;
      expand([...r, v], new Set([...p].filter((w) => nv.has(w))), new Set([...x].filter((w) => nv.has(w))));
      p.delete(v);
      x.add(v);
    }
  };
  expand([], new Set(adjacent.map((_, i) => i)), new Set());
  return out;
}

/** Subset.Intersect (v2.14.3): an empty subset meets all; two positives of one key must agree. */
function intersect(a: readonly Tag[], b: readonly Tag[]): boolean {
  if (a.length === 0 || b.length === 0) return true;
  for (const t of a) {
    if (t.not) continue;
    if (b.some((o) => !o.not && o.key === t.key && o.value !== t.value)) return false;
  }
  return true;
}

/** Subset.Intersect before #12340: the first key of `a` that `b` lacks ends the check with `true`. */
function intersectBeforeFix(a: readonly Tag[], b: readonly Tag[]): boolean {
  if (a.length === 0 || b.length === 0) return true;
  for (const t of a) {
    if (t.not) continue;
    const others = b.filter((o) => !o.not && o.key === t.key);
    if (others.length === 0) return true;
    if (others.some((o) => o.value !== t.value)) return false;
  }
  return true;
}

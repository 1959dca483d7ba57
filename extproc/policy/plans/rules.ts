// Kuma's rule list for `from` items (BuildRules in pkg/plugins/policies/core/rules/rules.go at 2.6): groups of
// intersecting subsets, every consistent combination of positive/negated tags, the merged conf of the items
// covering it.
// Used for /explain and conformance goldens; decisions use from-items.ts, which gives the same answers.
import type { FromItem } from "./from-items.js";
import { mergeConfs, type Conf } from "../selection/merge.js";
import type { Tag } from "../model/types.js";

export interface KumaRule {
  subset: Tag[];
  conf: Conf;
  /** Names of the contributing policies, sorted. */
  origin: string[];
}

/** Above this many distinct tags in one group the 2^n enumeration is not attempted. */
export const MAX_RULE_TAGS = 16;

export function buildRules(items: readonly FromItem[]): { rules: KumaRule[]; truncated: boolean } {
  const groups = components(items);
  const rules: KumaRule[] = [];
  let truncated = false;
  for (const group of groups) {
    const tags = distinctPositives(group.map((i) => items[i]!));
    if (tags.length > MAX_RULE_TAGS) {
      truncated = true;
      continue;
    }
    const n = tags.length;
    const total = 1 << n;
    for (let step = 1; step <= total; step++) {
      const combo = step % total; // 1, 2, …, 2^n-1, then 0 (all positive) last
      const subset = simplify(tags.map((t, bit) => ({ ...t, not: ((combo >> bit) & 1) === 1 })));
      if (!subset) continue;
      const covering = items.filter((it) => it.subset.every((t) => subset.some((s) => !s.not && s.key === t.key && s.value === t.value)));
      if (covering.length === 0) continue;
      const origin = [...new Set(covering.map((c) => c.policy.name))].sort();
      rules.push({ subset, conf: mergeConfs(covering.map((c) => c.conf)), origin });
    }
  }
  const positives = (r: KumaRule): number => r.subset.filter((t) => !t.not).length;
  rules.sort((a, b) => positives(b) - positives(a));
  return { rules, truncated };
}

/** Connected components of the "could intersect" graph, ordered by `ids.join(":")` descending (Kuma). */
function components(items: readonly FromItem[]): number[][] {
  const parent = items.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) if (intersect26(items[i]!.subset, items[j]!.subset)) parent[find(i)] = find(j);
  }
  const byRoot = new Map<number, number[]>();
  items.forEach((_, i) => {
    const r = find(i);
    if (!byRoot.has(r)) byRoot.set(r, []);
    byRoot.get(r)!.push(i);
  });
  return [...byRoot.values()].sort((a, b) => (a.join(":") < b.join(":") ? 1 : a.join(":") > b.join(":") ? -1 : 0));
}

/** Subset.Intersect as in 2.6, including its early `true` on a key the other side lacks. */
function intersect26(a: readonly Tag[], b: readonly Tag[]): boolean {
  if (a.length === 0 || b.length === 0) return true;
  for (const t of a) {
    const others = b.filter((o) => o.key === t.key);
    if (others.length === 0) return true;
    if (others.some((o) => o.value !== t.value)) return false;
  }
  return true;
}

function distinctPositives(items: readonly FromItem[]): Tag[] {
  const seen = new Map<string, Tag>();
  for (const it of items) for (const t of it.subset) seen.set(`${t.key}\u0000${t.value}`, { key: t.key, value: t.value, not: false });
  return [...seen.values()].sort((x, y) => (x.key === y.key ? cmp(x.value, y.value) : cmp(x.key, y.key)));
}

/** Per key: two positives contradict (drop); one positive hides the negatives; else keep the negatives. */
function simplify(tags: Tag[]): Tag[] | undefined {
  const out: Tag[] = [];
  const keys = [...new Set(tags.map((t) => t.key))];
  for (const key of keys) {
    const own = tags.filter((t) => t.key === key);
    const pos = own.filter((t) => !t.not);
    if (pos.length > 1) return undefined;
    out.push(...(pos.length === 1 ? pos : own));
  }
  return out;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// Kuma's rule list for `from` items (BuildRules in pkg/plugins/policies/core/rules/rules.go): groups of
// intersecting subsets (subset-groups.ts: components, or cliques from kumahq/kuma #15412), every consistent
// combination of positive/negated tags, the merged conf of the items covering it.
// Used for /explain and conformance goldens; decisions use from-items.ts, which gives the same answers.
import type { FromItem } from "./from-items.js";
import { mergeConfs, type Conf } from "../selection/merge.js";
import type { Tag } from "../model/types.js";
import { groupSubsets, type GroupingRules } from "./subset-groups.js";

export interface KumaRule {
  subset: Tag[];
  conf: Conf;
  /** Names of the contributing policies, sorted. */
  origin: string[];
}

/** Above this many distinct tags in one group the 2^n enumeration is not attempted. */
export const MAX_RULE_TAGS = 16;

/** `grouping` defaults to Kuma 2.6.0's: connected components under the unfixed intersection check. */
export function buildRules(items: readonly FromItem[], grouping: GroupingRules = { cliques: false, intersectFixed: false }): { rules: KumaRule[]; truncated: boolean } {
  const groups = groupSubsets(items.map((i) => i.subset), grouping);
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

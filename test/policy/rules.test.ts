// Kuma's rule list for `from` items (plans/rules.ts, used by /explain): its default grouping, which items cover a
// region, and the tag count up to which a group is still enumerated.
import test from "ava";
import { buildRules, MAX_RULE_TAGS } from "../../extproc/policy/plans/rules.js";
import type { FromItem } from "../../extproc/policy/plans/from-items.js";
import type { Policy } from "../../extproc/policy/model/types.js";

let calls = 0;

/** Items of policies named after their place, from "k=v,k=v" texts ("" = Mesh), keys under a prefix new to this process (groupings are memoized by text). */
function items(...texts: string[]): { items: FromItem[]; key: (k: string) => string } {
  const prefix = `r${++calls}.`;
  const list = texts.map((text, i) => ({
    policy: { name: `p${i}` } as Policy,
    index: 0,
    subset: text === "" ? [] : text.split(",").map((kv) => ({ key: prefix + kv.split("=")[0]!, value: kv.split("=")[1]!, not: false })),
    conf: { id: i },
    order: i,
  }));
  return { items: list, key: (k) => prefix + k };
}

const view = (r: ReturnType<typeof buildRules>, key: (k: string) => string) =>
  r.rules.map((rule) => [rule.subset.map((t) => `${t.not ? "!" : ""}${t.key.slice(key("").length)}=${t.value}`).join(","), rule.origin.join("+")]);

test("given items on two keys, when the rule list is built, then a region where one tag is negated is covered only by the item of the other", (t) => {
  const { items: list, key } = items("a=1", "b=1");
  t.deepEqual(view(buildRules(list, { cliques: false, intersectFixed: true }), key), [
    ["a=1,b=1", "p0+p1"],
    ["!a=1,b=1", "p1"],
    ["a=1,!b=1", "p0"],
  ]);
});

test("given items that intersect only before #12340, when the rule list is built without a grouping, then they are one group (Kuma 2.6)", (t) => {
  const { items: list, key } = items("k=1,j=1", "m=1,j=2");
  const rules = view(buildRules(list), key);
  t.deepEqual(rules, view(buildRules(list, { cliques: false, intersectFixed: false }), key));
  t.notDeepEqual(rules, view(buildRules(list, { cliques: false, intersectFixed: true }), key));
});

test(`given a group of exactly ${MAX_RULE_TAGS} distinct tags, when the rule list is built, then it is enumerated, not truncated`, (t) => {
  // one key with MAX_RULE_TAGS values, joined into one group by a Mesh item: most combinations contradict at once
  const { items: list } = items("", ...Array.from({ length: MAX_RULE_TAGS }, (_, i) => `k=v${i}`));
  const { rules, truncated } = buildRules(list, { cliques: false, intersectFixed: true });
  t.false(truncated);
  t.is(rules.length, MAX_RULE_TAGS + 1);
});

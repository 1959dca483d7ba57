// Which legacy `from` subsets Kuma enumerates together: intersection (before/after #12340), components vs cliques, order.
import test from "ava";
import { groupSubsets, MAX_CLIQUE_ITEMS } from "../../extproc/policy/plans/subset-groups.js";
import type { Policy, Tag } from "../../extproc/policy/model/types.js";
import { buildFromPlan } from "../../extproc/policy/plans/from-items.js";
import { buildRules, MAX_RULE_TAGS } from "../../extproc/policy/plans/rules.js";

/** "k=v" a positive tag, "!k=v" a negated one. */
function subset(...tags: string[]): Tag[] {
  return tags.map((s) => {
    const not = s.startsWith("!");
    const [key, value] = (not ? s.slice(1) : s).split("=") as [string, string];
    return { key, value, not };
  });
}

const FIXED = { cliques: false, intersectFixed: true };
const BEFORE_FIX = { cliques: false, intersectFixed: false };

// [what, a, b, intersect after #12340, intersect before #12340]
const pairs: [string, string[], string[], boolean, boolean][] = [
  ["empty meets anything", [], ["k=1"], true, true],
  ["anything meets empty", ["k=1"], [], true, true],
  ["same key, same value", ["k=1"], ["k=1"], true, true],
  ["same key, other value", ["k=1"], ["k=2"], false, false],
  ["different keys", ["k=1"], ["j=2"], true, true],
  ["a negated tag does not conflict with a positive of its key", ["k=1"], ["!k=2"], true, true],
  ["negated tags on both sides beside agreeing positives", ["!k=1", "k=2"], ["!k=3", "k=2"], true, true],
  ["first key agrees, second conflicts", ["k=1", "j=1"], ["k=1", "j=2"], false, false],
  ["second key conflicts in another order", ["k=1", "j=1"], ["j=2", "k=1"], false, false],
  ["a key the other lacks, then a conflict (before: the lacking key ends the check)", ["k=1", "j=1"], ["m=1", "j=2"], false, true],
  ["a conflict behind a key only one side has, both ways", ["j=1", "k=1"], ["j=1", "m=1", "k=2"], false, true],
];

for (const [what, a, b, fixed, before] of pairs) {
  for (const [rules, expected, label] of [[FIXED, fixed, "after #12340"], [BEFORE_FIX, before, "before #12340"]] as const) {
    test(`given two subsets (${what}), when grouped ${label}, then they are ${expected ? "one group" : "two groups"}`, (t) => {
      const groups = groupSubsets([subset(...a), subset(...b)], rules);
      t.deepEqual(groups, expected ? [[0, 1]] : [[1], [0]]);
    });
  }
}

/** Item 0..n-1 with distinct values of `k` (no two intersect), except those in `shared` which get k=shared. */
function items(n: number, shared: number[] = []): Tag[][] {
  return Array.from({ length: n }, (_, i) => subset(`k=${shared.includes(i) ? "shared" : `v${i}`}`));
}

test("given a triangle and a lone item, when grouped as components, then ids ascend in a group and groups descend by joined ids", (t) => {
  const groups = groupSubsets([subset("k=1"), subset(), subset("k=2"), subset("j=1"), subset("k=3")], FIXED);
  // 1 (empty) meets all; 3 (j=1) meets all; 0, 2, 4 conflict on k with each other
  t.deepEqual(groups, [[0, 1, 2, 3, 4]]);
  const more = groupSubsets([subset("k=1"), subset("k=2"), subset("k=1", "j=1"), subset("k=2", "j=2"), subset("k=3")], FIXED);
  t.deepEqual(more, [[4], [1, 3], [0, 2]]);
});

test("given a path a–b–c, when grouped as components, then one group; as cliques, then its two edges", (t) => {
  const path = [subset("a=1", "b=1"), subset("a=1"), subset("a=1", "b=2")];
  t.deepEqual(groupSubsets(path, FIXED), [[0, 1, 2]]);
  t.deepEqual(groupSubsets(path, { cliques: true, intersectFixed: true }), [[1, 2], [0, 1]]);
});

test("given a square with one diagonal and a lone item, when grouped as cliques, then each maximal clique once", (t) => {
  // 0–1, 1–2, 2–3, 3–0, 0–2 via an empty item 0 and 2 meeting all; 1 and 3 conflict; 4 conflicts with 1 and 3 only
  const square = [subset(), subset("k=1"), subset("j=1"), subset("k=2"), subset("k=3", "j=2")];
  t.deepEqual(groupSubsets(square, { cliques: true, intersectFixed: true }), [[0, 4], [0, 2, 3], [0, 1, 2]]);
  t.deepEqual(groupSubsets(square, FIXED), [[0, 1, 2, 3, 4]]);
});

test("given isolated items only, when grouped as cliques, then each is a clique of one", (t) => {
  t.deepEqual(groupSubsets(items(3), { cliques: true, intersectFixed: true }), [[2], [1], [0]]);
  t.deepEqual(groupSubsets([], FIXED), []);
});

test("given more than 9 items, when grouped, then ids ascend as numbers and groups order by their ids joined with ':' as text", (t) => {
  // items 1 and 2 together, 9 and 10 together; the rest alone
  const list = items(14, [1, 2]);
  list[9] = subset("k=nine");
  list[10] = subset("k=nine");
  const expected = [[9, 10], [8], [7], [6], [5], [4], [3], [1, 2], [13], [12], [11], [0]];
  t.deepEqual(groupSubsets(list, FIXED), expected);
  t.deepEqual(groupSubsets(list, { cliques: true, intersectFixed: true }), expected);
});

test("given a component whose search reaches ids out of order, when grouped as components, then its ids ascend", (t) => {
  // 0 meets 1 and 2 (empty), 1 and 2 conflict: the search from 0 finds 2 before 1
  t.deepEqual(groupSubsets([subset(), subset("k=1"), subset("k=2")], FIXED), [[0, 1, 2]]);
  t.deepEqual(groupSubsets([subset(), subset("k=1"), subset("k=2")], { cliques: true, intersectFixed: true }), [[0, 2], [0, 1]]);
});

test(`given more than ${MAX_CLIQUE_ITEMS} items, when cliques are asked for, then the components stand in`, (t) => {
  const build = (n: number): Tag[][] => {
    const list = items(n);
    // a path 0–1–2 on key a; the rest conflict with it on a
    list[0] = subset("a=1", "b=1");
    list[1] = subset("a=1");
    list[2] = subset("a=1", "b=2");
    for (let i = 3; i < n; i++) list[i] = subset(`a=x${i}`);
    return list;
  };
  const cliques = { cliques: true, intersectFixed: true };
  const atLimit = groupSubsets(build(MAX_CLIQUE_ITEMS), cliques);
  t.deepEqual(atLimit.filter((g) => g.length > 1), [[1, 2], [0, 1]]);
  const over = groupSubsets(build(MAX_CLIQUE_ITEMS + 1), cliques);
  t.deepEqual(over.filter((g) => g.length > 1), [[0, 1, 2]]);
  t.is(over.length, MAX_CLIQUE_ITEMS + 1 - 2);
});

function mtp(name: string, from: [Record<string, string> | undefined, string][]): Policy {
  const spec = { targetRef: { kind: "Mesh" }, from: from.map(([tags, action]) => ({ targetRef: tags ? { kind: "MeshSubset", tags } : { kind: "Mesh" }, default: { action } })) };
  return { type: "MeshTrafficPermission", mesh: "default", name, spec } as unknown as Policy;
}

function ruleView(items: Parameters<typeof buildRules>[0], grouping?: Parameters<typeof buildRules>[1]) {
  const { rules, truncated } = buildRules(items, grouping);
  return { truncated, rules: rules.map((r) => [r.subset.map((t) => `${t.not ? "!" : ""}${t.key}=${t.value}`).join(","), r.conf.action, r.origin.join("+")]) };
}

test("given from items, when Kuma's rule list is built, then tags come sorted by key then value and each region merges only the items it covers", (t) => {
  const items = buildFromPlan("MeshTrafficPermission", [mtp("m", [[undefined, "Deny"]]), mtp("x", [[{ b: "2" }, "Allow"], [{ b: "1" }, "AllowWithShadowDeny"]])]).items;
  t.deepEqual(ruleView(items, { cliques: false, intersectFixed: true }), {
    truncated: false,
    rules: [
      ["b=2", "Allow", "m+x"],
      ["b=1", "AllowWithShadowDeny", "m+x"],
      ["!b=1,!b=2", "Deny", "m"],
    ],
  });
});

test("given items whose grouping differs by version, when the rule list is built without a grouping, then Kuma 2.6's (components, unfixed check) is used", (t) => {
  const items = buildFromPlan("MeshTrafficPermission", [mtp("p", [[{ k: "1", j: "1" }, "Allow"], [{ m: "1", j: "2" }, "Deny"], [{ a: "1", b: "1" }, "Deny"], [{ a: "1" }, "Allow"], [{ a: "1", b: "2" }, "Deny"]])]).items;
  const legacy = ruleView(items, { cliques: false, intersectFixed: false });
  t.deepEqual(ruleView(items), legacy);
  t.notDeepEqual(ruleView(items, { cliques: true, intersectFixed: false }), legacy);
});

test(`given a group with more than ${MAX_RULE_TAGS} distinct tags, when the rule list is built, then that group is left out and the list says it is truncated`, (t) => {
  const many = Array.from({ length: MAX_RULE_TAGS + 1 }, (_, i): [Record<string, string>, string] => [{ [`k${i}`]: "v" }, "Allow"]);
  const items = buildFromPlan("MeshTrafficPermission", [mtp("many", many), mtp("alone", [[{ other: "1" }, "Deny"]])]).items;
  // every item has its own key, so all meet: one group of 18 tags, left out; alone, "other" makes a rule list
  const { rules, truncated } = buildRules(items, { cliques: false, intersectFixed: true });
  t.true(truncated);
  t.deepEqual(rules, []);
  t.false(buildRules(items.slice(MAX_RULE_TAGS + 1)).truncated);
});

// Groupings of legacy `from` subsets (plans/subset-groups.ts) under names no earlier call used: groupSubsets keeps
// its answers by input text for the life of the process (a warm mutation worker too), so each call here computes.
import test from "ava";
import { groupSubsets, MAX_CLIQUE_ITEMS, type GroupingRules } from "../../extproc/policy/plans/subset-groups.js";
import type { Tag } from "../../extproc/policy/model/types.js";

let calls = 0;

/** Subsets from "k=v" / "!k=v" texts, every key under a prefix new to this process. */
function fresh(...lists: string[][]): Tag[][] {
  const prefix = `g${++calls}.${Math.random().toString(36).slice(2)}.`;
  return lists.map((tags) =>
    tags.map((s) => {
      const not = s.startsWith("!");
      const [key, value] = (not ? s.slice(1) : s).split("=") as [string, string];
      return { key: prefix + key, value, not };
    }),
  );
}

const FIXED: GroupingRules = { cliques: false, intersectFixed: true };
const BEFORE_FIX: GroupingRules = { cliques: false, intersectFixed: false };
const CLIQUES: GroupingRules = { cliques: true, intersectFixed: true };

// [what, a, b, intersect after #12340, intersect before #12340]
const pairs: [string, string[], string[], boolean, boolean][] = [
  ["same key, other value", ["k=1"], ["k=2"], false, false],
  ["different keys", ["k=1"], ["j=2"], true, true],
  ["a negated tag beside an agreeing positive", ["!k=1", "k=2"], ["!k=3", "k=2"], true, true],
  ["a negated tag against a positive of its key", ["!k=2"], ["k=1"], true, true],
  ["second key conflicts", ["k=1", "j=1"], ["j=2", "k=1"], false, false],
  ["a key the other lacks, then a conflict", ["k=1", "j=1"], ["m=1", "j=2"], false, true],
  ["one side with two values of the key the other has once", ["k=1"], ["k=1", "k=2"], false, false],
];

for (const [what, a, b, fixed, before] of pairs) {
  for (const [rules, expected, label] of [[FIXED, fixed, "after #12340"], [BEFORE_FIX, before, "before #12340"]] as const) {
    test(`given two subsets (${what}), when grouped ${label}, then they are ${expected ? "one group" : "two groups"}`, (t) => {
      t.deepEqual(groupSubsets(fresh(a, b), rules), expected ? [[0, 1]] : [[1], [0]]);
      t.deepEqual(groupSubsets(fresh(b, a), rules), expected ? [[0, 1]] : [[1], [0]]);
    });
  }
}

test("given two pairs and a lone item, when grouped as components, then ids ascend in a group and groups descend by joined ids", (t) => {
  const list = fresh(["k=1"], ["k=2"], ["k=1", "j=1"], ["k=2", "j=2"], ["k=3"]);
  t.deepEqual(groupSubsets(list, FIXED), [[4], [1, 3], [0, 2]]);
});

test("given a component whose search reaches ids out of order, when grouped as components, then its ids ascend", (t) => {
  t.deepEqual(groupSubsets(fresh([], ["k=1"], ["k=2"]), FIXED), [[0, 1, 2]]);
});

test("given a path a–b–c, when grouped as cliques, then its two edges", (t) => {
  t.deepEqual(groupSubsets(fresh(["a=1", "b=1"], ["a=1"], ["a=1", "b=2"]), CLIQUES), [[1, 2], [0, 1]]);
});

test("given a square with one diagonal and a lone item, when grouped as cliques, then each maximal clique once", (t) => {
  const square = fresh([], ["k=1"], ["j=1"], ["k=2"], ["k=3", "j=2"]);
  t.deepEqual(groupSubsets(square, CLIQUES), [[0, 4], [0, 2, 3], [0, 1, 2]]);
});

test("given more than 9 items, when grouped, then groups order by their ids joined with ':' as text", (t) => {
  const texts = Array.from({ length: 12 }, (_, i) => [`k=v${i}`]);
  texts[2] = ["k=v1"];
  texts[10] = ["k=v9"];
  const expected = [[9, 10], [8], [7], [6], [5], [4], [3], [1, 2], [11], [0]];
  t.deepEqual(groupSubsets(fresh(...texts), FIXED), expected);
  t.deepEqual(groupSubsets(fresh(...texts), CLIQUES), expected);
});

test(`given ${MAX_CLIQUE_ITEMS} items and one more, when cliques are asked for, then cliques up to the limit and components over it`, (t) => {
  const build = (n: number): string[][] => [["a=1", "b=1"], ["a=1"], ["a=1", "b=2"], ...Array.from({ length: n - 3 }, (_, i) => [`a=x${i}`])];
  t.deepEqual(groupSubsets(fresh(...build(MAX_CLIQUE_ITEMS)), CLIQUES).filter((g) => g.length > 1), [[1, 2], [0, 1]]);
  t.deepEqual(groupSubsets(fresh(...build(MAX_CLIQUE_ITEMS + 1)), CLIQUES).filter((g) => g.length > 1), [[0, 1, 2]]);
});

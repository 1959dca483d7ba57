// Memos of the one-policy-edit path: subset texts, targetRef subsets and policy keys kept by object read as built anew.
import test from "ava";
import { groupSubsets, subsetText } from "../../extproc/policy/plans/subset-groups.js";
import { dedupe } from "../../extproc/policy/selection/policy-set.js";
import type { Policy, Tag } from "../../extproc/policy/model/types.js";

test("given subsets, when their text is taken, then it is JSON.stringify of their [not, key, value] triples, also the second time", (t) => {
  const subset: Tag[] = [{ key: "kuma.io/service", value: "a\"b", not: false }, { key: "shard", value: "s-1", not: true }];
  const expected = JSON.stringify(subset.map((x) => [x.not, x.key, x.value]));
  t.is(subsetText(subset), expected);
  t.is(subsetText(subset), expected);
  t.is(subsetText([]), "[]");
});

test("given the same subsets as new arrays and as kept ones, when grouped, then the groups are the same", (t) => {
  const a: Tag[] = [{ key: "k", value: "1", not: false }];
  const b: Tag[] = [{ key: "k", value: "2", not: false }];
  const rules = { cliques: true, intersectFixed: true };
  const first = groupSubsets([a, b, a], rules);
  t.deepEqual(groupSubsets([[...a], [...b], [...a]], rules), first);
  t.deepEqual(groupSubsets([[...b], [...a]], rules), groupSubsets([b, a], rules));
});

test("given a policy deduplicated once, when its name is changed and it is deduplicated again, then its new key counts", (t) => {
  const p = { type: "MeshTrafficPermission", mesh: "default", name: "a" } as Policy;
  const q = { type: "MeshTrafficPermission", mesh: "default", name: "b" } as Policy;
  t.deepEqual(dedupe([p, q]).duplicates, []);
  (q as { name: string }).name = "a";
  t.deepEqual(dedupe([p, q]), { policies: [q], duplicates: ["MeshTrafficPermission/default/a"] });
});

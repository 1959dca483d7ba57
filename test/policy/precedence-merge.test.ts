// precedence › Kuma 2.6 sort keys; merge › JSON merge patch with atomic lists and ignored nulls.
import test from "ava";
import { mergeConfs } from "../../extproc/policy/selection/merge.js";
import { sortByPrecedence } from "../../extproc/policy/selection/precedence.js";
import type { Policy, TargetRef } from "../../extproc/policy/model/types.js";

const p = (name: string, targetRef: TargetRef, labels: Record<string, string> = {}): Policy => ({
  type: "MeshTrafficPermission",
  mesh: "default",
  name,
  labels,
  spec: { targetRef, from: [] },
  displayName: labels["kuma.io/display-name"] ?? name,
  role: "system",
  shadow: false,
  warnings: [],
  ...(labels["kuma.io/origin"] ? { origin: labels["kuma.io/origin"] as "zone" | "global" } : {}),
});

const order = test.macro({
  exec(t, policies: Policy[], expected: string[], compat: "2.6" | "2.5" = "2.6") {
    // given unsorted policies; when sorted; then lowest priority first, winner last
    t.deepEqual(sortByPrecedence(policies, compat).map((x) => x.name), expected);
  },
  title: (provided = "") => `precedence › ${provided}`,
});

test("kind rank Mesh < MeshSubset < MeshService < MeshServiceSubset", order,
  [p("d", { kind: "MeshServiceSubset", name: "b", tags: { a: "1" } }), p("c", { kind: "MeshService", name: "b" }), p("a", { kind: "Mesh" }), p("b", { kind: "MeshSubset", tags: { a: "1" } })],
  ["a", "b", "c", "d"]);
test("2.6: earlier name wins (sorts last)", order, [p("rule-a", { kind: "Mesh" }), p("rule-b", { kind: "Mesh" })], ["rule-b", "rule-a"]);
test("2.5 compat: later name wins", order, [p("rule-b", { kind: "Mesh" }), p("rule-a", { kind: "Mesh" })], ["rule-a", "rule-b"], "2.5");
test("origin global < unset < zone before names", order,
  [p("a", { kind: "Mesh" }, { "kuma.io/origin": "zone" }), p("b", { kind: "Mesh" }), p("c", { kind: "Mesh" }, { "kuma.io/origin": "global" })],
  ["c", "b", "a"]);

const merges = test.macro({
  exec(t, confs: unknown[], expected: unknown) {
    t.deepEqual(mergeConfs(confs), expected);
  },
  title: (provided = "") => `merge › ${provided}`,
});
test("objects deep-merge", merges, [{ a: { x: 1, y: 1 } }, { a: { y: 2 } }], { a: { x: 1, y: 2 } });
test("lists replace", merges, [{ l: [1, 2, 3] }, { l: [4] }], { l: [4] });
test("an empty list wipes", merges, [{ l: [1] }, { l: [] }], { l: [] });
test("null does not unset", merges, [{ a: 1, b: { c: 1 } }, { a: null, b: null }], { a: 1, b: { c: 1 } });
test("scalar replaces object", merges, [{ a: { x: 1 } }, { a: 2 }], { a: 2 });

// precedence › Kuma 2.6 sort keys; merge › JSON merge patch with atomic lists and ignored nulls.
import test from "ava";
import { mergeConfs } from "../../extproc/policy/selection/merge.js";
import { byPrecedence, sortByPrecedence } from "../../extproc/policy/selection/precedence.js";
import type { Policy, PolicyRole, TargetRef } from "../../extproc/policy/model/types.js";
import type { KumaVersion } from "../../extproc/policy/model/kuma-version.js";

const p = (name: string, targetRef: TargetRef, labels: Record<string, string> = {}, role: PolicyRole = "system"): Policy => ({
  type: "MeshTrafficPermission",
  mesh: "default",
  name,
  labels,
  spec: { targetRef, from: [] },
  displayName: labels["kuma.io/display-name"] ?? name,
  role,
  shadow: false,
  warnings: [],
  ...(labels["kuma.io/origin"] ? { origin: labels["kuma.io/origin"] as "zone" | "global" } : {}),
});

const order = test.macro({
  exec(t, policies: Policy[], expected: string[], compat: KumaVersion = "2.6") {
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

// Roles (kuma.io/policy-role, CompareByPolicyAttributes at v2.14.3): system < producer < consumer <
// workload-owner, compared before the display name. Names are chosen so the name key alone would give the
// opposite order (2.9+: the earlier name wins), so only the role key can produce the expected one.
const role = (name: string, r: PolicyRole) => p(name, { kind: "Mesh" }, {}, r);
test("2.14: a consumer policy outranks a producer policy, whatever their names", order,
  [role("a-producer", "producer"), role("z-consumer", "consumer")], ["a-producer", "z-consumer"], "2.14");
test("2.14: the order holds with the inputs reversed", order,
  [role("z-consumer", "consumer"), role("a-producer", "producer")], ["a-producer", "z-consumer"], "2.14");
test("2.14: all four roles rank system < producer < consumer < workload-owner", order,
  [role("a-owner", "workload-owner"), role("b-consumer", "consumer"), role("c-producer", "producer"), role("d-system", "system")],
  ["d-system", "c-producer", "b-consumer", "a-owner"], "2.14");
test("2.8: consumer and workload-owner share a rank, so the name decides between them", order,
  [role("z-owner", "workload-owner"), role("a-consumer", "consumer"), role("b-producer", "producer")],
  ["b-producer", "z-owner", "a-consumer"], "2.8");
test("2.6: roles are not a key, only the name", order,
  [role("a-producer", "producer"), role("z-consumer", "consumer")], ["z-consumer", "a-producer"], "2.6");

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

// Each key below is checked with names chosen so the display-name key alone (2.6+: the earlier name sorts last)
// would give the opposite order: only the key under test can produce the expected one.
test("origin global < unset < zone, whatever the names", order,
  [p("c", { kind: "Mesh" }, { "kuma.io/origin": "zone" }), p("b", { kind: "Mesh" }), p("a", { kind: "Mesh" }, { "kuma.io/origin": "global" })],
  ["a", "b", "c"]);
test("2.14: a Dataplane ref by name outranks one by labels", order,
  [p("b", { kind: "Dataplane", name: "dp-1" }), p("a", { kind: "Dataplane", labels: { app: "x" } })], ["a", "b"], "2.14");
test("2.14: a Dataplane ref by labels ranks under one by name, whatever the input order", order,
  [p("a", { kind: "Dataplane", labels: { app: "x" } }), p("b", { kind: "Dataplane", name: "dp-1" })], ["a", "b"], "2.14");
test("2.14: a Dataplane ref with sectionName outranks one without", order,
  [p("b", { kind: "Dataplane", labels: { app: "x" }, sectionName: "http" }), p("a", { kind: "Dataplane", labels: { app: "x" } })], ["a", "b"], "2.14");
test("2.14: a Dataplane ref to all proxies and one by labels tie, so the name decides", order,
  [p("a", { kind: "Dataplane", labels: { app: "x" } }), p("b", { kind: "Dataplane" })], ["b", "a"], "2.14");
test("2.14: sectionName is a Dataplane key only: two MeshService refs go by name", order,
  [p("a", { kind: "MeshService", name: "backend" }), p("b", { kind: "MeshService", name: "backend", sectionName: "http" })], ["b", "a"], "2.14");
test("2.14: a MeshGateway ref with more listener tags outranks one with fewer", order,
  [p("b", { kind: "MeshGateway", name: "gw", tags: { port: "80" } }), p("a", { kind: "MeshGateway", name: "gw" })], ["a", "b"], "2.14");

// Each test below also runs with its inputs reversed: a key that answers the same sign whatever the order would
// pass one order by luck of the sort.
const bothOrders = test.macro({
  exec(t, policies: Policy[], expected: string[], compat: KumaVersion = "2.14") {
    // given two policies in either input order; when sorted; then the same order, winner last
    t.deepEqual(sortByPrecedence(policies, compat).map((x) => x.name), expected);
    t.deepEqual(sortByPrecedence([...policies].reverse(), compat).map((x) => x.name), expected);
  },
  title: (provided = "") => `precedence › ${provided}`,
});
test("2.14: a Dataplane ref by name and one to all proxies tie, so the name decides", bothOrders,
  [p("b", { kind: "Dataplane", name: "dp-1" }), p("a", { kind: "Dataplane" })], ["b", "a"]);
test("2.14: a Dataplane ref with sectionName outranks one without, in either input order", bothOrders,
  [p("a", { kind: "Dataplane", labels: { app: "x" } }), p("b", { kind: "Dataplane", labels: { app: "x" }, sectionName: "http" })], ["a", "b"]);
test("2.14: a workload-owner policy outranks a consumer one, whatever their names", bothOrders,
  [role("a-consumer", "consumer"), role("z-owner", "workload-owner")], ["a-consumer", "z-owner"]);
test("2.14: listener tags are a MeshGateway key only: two MeshSubset refs go by name", bothOrders,
  [p("a", { kind: "MeshSubset", tags: { x: "1" } }), p("b", { kind: "MeshSubset", tags: { x: "1", y: "2" } })], ["b", "a"]);

test("precedence › 2.14: two policies with the same display name tie: the comparator answers 0 and the sort keeps input order", (t) => {
  // given two Kubernetes policies of one display name (other namespaces); when compared and sorted; then a tie
  const x = p("web.ns-1", { kind: "Mesh" }, { "kuma.io/display-name": "web" });
  const y = p("web.ns-2", { kind: "Mesh" }, { "kuma.io/display-name": "web" });
  t.is(byPrecedence("2.14")(x, y), 0);
  t.deepEqual(sortByPrecedence([x, y], "2.14").map((z) => z.name), ["web.ns-1", "web.ns-2"]);
  t.deepEqual(sortByPrecedence([y, x], "2.14").map((z) => z.name), ["web.ns-2", "web.ns-1"]);
});

test("non-objects are skipped (a list, a string, a number, undefined)", merges, [{ a: 1 }, [9], "x", 5, undefined], { a: 1 });

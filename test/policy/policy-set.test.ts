// policy set › routesOf and dedupe as selection sees the set: a mesh's MeshHTTPRoutes by name, one policy per
// type/mesh/name with the later copy in place, lists known distinct passed through, keys following in-place edits.
import test from "ava";
import { dedupe, knownDistinct, routesOf } from "../../extproc/policy/selection/policy-set.js";
import type { Policy, PolicyType } from "../../extproc/policy/model/types.js";

const policy = (type: PolicyType, mesh: string, name: string, tag = ""): Policy =>
  ({ type, mesh, name, labels: {}, spec: { targetRef: { kind: "Mesh" } }, displayName: name + tag }) as unknown as Policy;

test("policy set › given routes and other policies of two meshes, when routesOf one mesh, then only its MeshHTTPRoutes by name", (t) => {
  // Given a route in each mesh and a MeshRateLimit in the asked mesh
  const mine = policy("MeshHTTPRoute", "default", "r1");
  const set = [mine, policy("MeshHTTPRoute", "other", "r2"), policy("MeshRateLimit", "default", "t1")];
  // When / then
  t.deepEqual([...routesOf(set, "default")], [["r1", mine]]);
  t.deepEqual([...routesOf(set, "nowhere")], []);
});

test("policy set › given a set without duplicates, when deduped, then a copy in the same order and no duplicates", (t) => {
  // Given distinct policies
  const input = [policy("MeshRateLimit", "default", "a"), policy("MeshRateLimit", "default", "b"), policy("MeshFaultInjection", "default", "a")];
  // When
  const out = dedupe(input);
  // Then a new array with the same policies
  t.deepEqual(out, { policies: input, duplicates: [] });
  t.not(out.policies, input);
});

test("policy set › given a later copy of a policy, when deduped, then it replaces the earlier one in place and is reported", (t) => {
  // Given a, b, then a again
  const first = policy("MeshRateLimit", "default", "a", "#1");
  const b = policy("MeshRateLimit", "default", "b");
  const again = policy("MeshRateLimit", "default", "a", "#2");
  // When / then
  t.deepEqual(dedupe([first, b, again]), { policies: [again, b], duplicates: ["MeshRateLimit/default/a"] });
});

test("policy set › given a list marked known distinct, when deduped, then that very list comes back", (t) => {
  // Given a list from a deduped one, marked
  const list = knownDistinct([policy("MeshRateLimit", "default", "a")]);
  // When / then
  const out = dedupe(list);
  t.is(out.policies, list);
  t.deepEqual(out.duplicates, []);
});

test("policy set › given a policy edited in place after a dedupe, when deduped again, then its new type or mesh is its key", (t) => {
  // Given policies deduped once, then one retyped and one moved to another mesh in place
  const retyped = policy("MeshFaultInjection", "default", "a");
  const moved = policy("MeshRateLimit", "other", "b");
  dedupe([retyped, moved]);
  (retyped as { type: PolicyType }).type = "MeshRateLimit";
  moved.mesh = "default";
  // When each is deduped with a policy of the key it now has
  const byType = dedupe([retyped, policy("MeshRateLimit", "default", "a")]);
  const byMesh = dedupe([moved, policy("MeshRateLimit", "default", "b")]);
  // Then each is a duplicate
  t.deepEqual(byType.duplicates, ["MeshRateLimit/default/a"]);
  t.deepEqual(byMesh.duplicates, ["MeshRateLimit/default/b"]);
});

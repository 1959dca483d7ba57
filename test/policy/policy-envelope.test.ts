// policy envelope › the universal and Kubernetes (CRD) envelope of a policy document: which form is read, the fields each form checks (with path and message), and the mesh and name they give.
import test from "ava";
import { validatePolicyObject } from "../../extproc/policy/documents/normalize.js";

const SPEC = () => ({ targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Allow" } }] });
const universal = (over: Record<string, unknown>) => ({ type: "MeshTrafficPermission", mesh: "default", name: "p", spec: SPEC(), ...over });
const crd = (over: Record<string, unknown>, meta: Record<string, unknown> = {}) => ({ apiVersion: "kuma.io/v1alpha1", kind: "MeshTrafficPermission", metadata: { name: "p", namespace: "kuma-demo", ...meta }, spec: SPEC(), ...over });

const violates = test.macro({
  exec(t, build: () => unknown, field: string, message: string | RegExp) {
    // Given a policy document with one envelope mistake; when validated; then that violation (field path and message)
    const { policy, violations } = validatePolicyObject(build());
    t.is(policy, undefined);
    const matches = (m: string) => (typeof message === "string" ? m === message : message.test(m));
    t.true(violations.some((v) => v.field === field && matches(v.message)), JSON.stringify(violations));
  },
  title: (provided = "") => `policy envelope › ${provided}`,
});

test("an empty universal mesh must not be empty", violates, () => universal({ mesh: "" }), "mesh", "must not be empty");
test("a universal mesh that is not a string", violates, () => universal({ mesh: 5 }), "mesh", "must be a string");
test("a universal label that is not a string", violates, () => universal({ labels: { team: 5 } }), "labels.team", "must be a string");
test("an unknown universal type", violates, () => universal({ type: "Nope" }), "type", /^must be one of .*MeshTrafficPermission/);
test("an unknown CRD kind", violates, () => crd({ kind: "Nope" }), "kind", /^must be one of .*MeshTrafficPermission/);
test("a CRD metadata that is not an object", violates, () => crd({ metadata: "p" }), "metadata", "must be an object");
test("a CRD namespace that is not a string", violates, () => crd({}, { namespace: 5 }), "metadata.namespace", "must be a string");
test("a CRD label that is not a string", violates, () => crd({}, { labels: { team: 5 } }), "metadata.labels.team", "must be a string");
test("a document with kind but no type or apiVersion is read as a CRD", violates, () => { const d: Record<string, unknown> = crd({}); delete d.apiVersion; return d; }, "apiVersion", "must be kuma.io/v1alpha1");
test("a document with apiVersion but no type or kind is read as a CRD", violates, () => { const d: Record<string, unknown> = crd({}); delete d.kind; return d; }, "kind", /^must be defined \(one of .*MeshTrafficPermission/);

test("policy envelope › given a universal document that also has kind and apiVersion, when validated, then it is read as universal", (t) => {
  // Given type, mesh, name plus stray kind/apiVersion; when validated; then the universal fields give the policy
  const { policy, violations } = validatePolicyObject(universal({ kind: "Nope", apiVersion: "x" }));
  t.deepEqual(violations, []);
  t.is(policy?.name, "p");
  t.is(policy?.mesh, "default");
});

test("policy envelope › given CRDs with and without the kuma.io/mesh label, when validated, then the mesh is the label's or default", (t) => {
  // Given a CRD labelled with mesh `other`, and one without labels; when validated; then its mesh and name.namespace
  const labelled = validatePolicyObject(crd({}, { labels: { "kuma.io/mesh": "other" } }));
  t.deepEqual(labelled.violations, []);
  t.is(labelled.policy?.mesh, "other");
  t.is(labelled.policy?.name, "p.kuma-demo");
  const plain = validatePolicyObject(crd({}));
  t.is(plain.policy?.mesh, "default");
  t.is(plain.policy?.displayName, "p");
});

test("policy envelope › given a universal document without mesh, when validated, then its mesh is default", (t) => {
  // Given no mesh field; when validated; then mesh `default`
  const d: Record<string, unknown> = universal({});
  delete d.mesh;
  t.is(validatePolicyObject(d).policy?.mesh, "default");
});

test("policy envelope › given an unknown kuma.io/policy-role label, when validated, then only the label is reported and the spec is checked as a system policy's", (t) => {
  // Given a MeshHTTPRoute on a MeshGateway (a top-level ref only system policies may use) with a bogus role label
  const doc = {
    type: "MeshHTTPRoute", name: "p", mesh: "default",
    labels: { "kuma.io/policy-role": "bogus", "k8s.kuma.io/namespace": "shop" },
    spec: { targetRef: { kind: "MeshGateway", name: "gw" }, to: [{ targetRef: { kind: "Mesh" }, rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], default: { backendRefs: [{ kind: "MeshService", name: "b" }] } }] }] },
  };
  // When validated; then the one violation names the label and the allowed roles
  t.deepEqual(validatePolicyObject(doc).violations, [{ field: "labels.kuma.io/policy-role", message: "must be one of system, producer, consumer, workload-owner" }]);
});

// policy meta › what a valid policy carries besides its spec: Kuma's policy role (kuma.io/policy-role, or computed
// from its namespace and `to` items, as pkg/core/resources/labels/compute.go does), namespace, zone, origin, display
// name, shadow effect and an implicit top-level targetRef.
import test from "ava";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";

const RULES = [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], default: { filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "x", value: "1" }] } }] } }];
type Ref = Record<string, unknown>;
const route = (namespace: string | undefined, to: Ref[], labels: Record<string, string> = {}) => ({
  apiVersion: "kuma.io/v1alpha1",
  kind: "MeshHTTPRoute",
  metadata: { name: "r", ...(namespace ? { namespace } : {}), labels: { "kuma.io/mesh": "default", ...labels } },
  spec: { targetRef: { kind: "Mesh" }, to: to.map((targetRef) => ({ targetRef, rules: RULES })) },
});
const BACKEND = { kind: "MeshService", name: "backend" };

const role = test.macro({
  exec(t, doc: unknown, expected: string, version: "2.14" | "3.0" = "2.14") {
    // Given a policy; when validated; then it loads with this role
    const r = validatePolicyObject(doc, version);
    t.deepEqual(r.violations, []);
    t.is(r.policy?.role as string | undefined, expected);
  },
  title: (provided = "") => `policy meta › role ${provided}`,
});

test("system without a namespace", role, route(undefined, [BACKEND]), "system");
test("system in the system namespace", role, route("kuma-system", [BACKEND]), "system");
test("producer: a MeshService named in its own namespace (implicitly)", role, route("shop", [BACKEND]), "producer");
test("producer: a MeshService named in its own namespace (explicitly)", role, route("shop", [{ ...BACKEND, namespace: "shop" }]), "producer");
test("consumer: a MeshService of another namespace", role, route("shop", [{ ...BACKEND, namespace: "other" }]), "consumer");
test("consumer: a MeshExternalService", role, route("shop", [{ kind: "MeshExternalService", name: "ext" }]), "consumer");
test("the label wins over the computed role", role, route("shop", [BACKEND], { "kuma.io/policy-role": "consumer" }), "consumer");
test("workload-owner: from items in a namespace", role, {
  apiVersion: "kuma.io/v1alpha1",
  kind: "MeshTrafficPermission",
  metadata: { name: "p", namespace: "shop", labels: { "kuma.io/mesh": "default" } },
  spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Allow" } }] },
}, "workload-owner");
test("producer under 3.0: a MeshService by display name only", role, route("shop", [{ kind: "MeshService", labels: { "kuma.io/display-name": "backend" } }]), "producer", "3.0");
test("producer under 3.0: by display name and its own namespace", role, route("shop", [{ kind: "MeshService", labels: { "kuma.io/display-name": "backend", "k8s.kuma.io/namespace": "shop" } }]), "producer", "3.0");
test("consumer under 3.0: another namespace", role, route("shop", [{ kind: "MeshService", labels: { "kuma.io/display-name": "backend", "k8s.kuma.io/namespace": "other" } }]), "consumer", "3.0");
test("consumer under 3.0: a label beside the display name", role, route("shop", [{ kind: "MeshService", labels: { "kuma.io/display-name": "backend", app: "x" } }]), "consumer", "3.0");

test("policy meta › a role label of another value, and producer and consumer items mixed, are violations", (t) => {
  // Given a bad role label, and a policy whose items name its own and another namespace's services
  const label = validatePolicyObject(route("shop", [BACKEND], { "kuma.io/policy-role": "owner" }));
  const mixed = validatePolicyObject(route("shop", [BACKEND, { ...BACKEND, name: "b", namespace: "other" }]));
  // When validated; then each is rejected with Kuma's words
  t.deepEqual(label.violations, [{ field: "labels.kuma.io/policy-role", message: "must be one of system, producer, consumer, workload-owner" }]);
  t.deepEqual(mixed.violations, [{ field: "spec.to", message: "it's not allowed to mix producer and consumer items in the same policy" }]);
});

test("policy meta › namespace, zone, origin, display name and shadow effect from the Kubernetes form", (t) => {
  // Given a namespaced CRD with zone, origin, display-name and effect labels; when validated; then
  const r = validatePolicyObject(route("shop", [BACKEND], { "kuma.io/zone": "east", "kuma.io/origin": "zone", "kuma.io/display-name": "shown", "kuma.io/effect": "shadow" }));
  t.like(r.policy, { name: "r.shop", displayName: "shown", namespace: "shop", k8sNamespace: "shop", zone: "east", origin: "zone", shadow: true });
  // and without them: no zone, origin or namespace fields, not shadow
  const plain = validatePolicyObject(route(undefined, [BACKEND]));
  t.like(plain.policy, { name: "r", displayName: "r", shadow: false });
  for (const field of ["zone", "origin", "namespace", "k8sNamespace", "implicitTargetRef"]) t.false(plain.policy !== undefined && field in plain.policy, field);
});

test("policy meta › the universal form: namespace from its label, origin global, another origin ignored, an absent targetRef implicit", (t) => {
  // Given universal policies with a namespace label and origins; when validated; then
  const to = [{ targetRef: BACKEND, rules: RULES }];
  const global = validatePolicyObject({ type: "MeshHTTPRoute", name: "u", mesh: "default", labels: { "k8s.kuma.io/namespace": "shop", "kuma.io/origin": "global" }, spec: { targetRef: { kind: "Mesh" }, to } });
  t.like(global.policy, { role: "producer", k8sNamespace: "shop", origin: "global" });
  t.false(global.policy !== undefined && "namespace" in global.policy);
  const other = validatePolicyObject({ type: "MeshHTTPRoute", name: "u", mesh: "default", labels: { "kuma.io/origin": "elsewhere" }, spec: { to } });
  t.like(other.policy, { role: "system", implicitTargetRef: true, spec: { targetRef: { kind: "Mesh" } } });
  t.false(other.policy !== undefined && "origin" in other.policy);
});

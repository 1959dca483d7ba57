// normalize role › how validatePolicyObject reads a document's form, computes Kuma's policy role from `from` and each
// `to` item (names by ref name, or by display-name labels under 3.0), checks names against RFC 1123 (2.10 on),
// and which violations and warnings a rejected document carries.
import test from "ava";
import { validatePolicyObject } from "../../extproc/policy/documents/normalize.js";
import type { KumaVersion } from "../../extproc/policy/model/kuma-version.js";

const RULES = [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], default: { filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "x", value: "1" }] } }] } }];
const MIXED = { field: "spec.to", message: "it's not allowed to mix producer and consumer items in the same policy" };

/** A MeshHTTPRoute in namespace `shop` with one `to` item per ref. */
const route = (refs: unknown[]) => ({
  apiVersion: "kuma.io/v1alpha1",
  kind: "MeshHTTPRoute",
  metadata: { name: "r", namespace: "shop", labels: { "kuma.io/mesh": "default" } },
  spec: { targetRef: { kind: "Mesh" }, to: refs.map((targetRef) => ({ targetRef, rules: RULES })) },
});
/** A MeshTrafficPermission in namespace `shop` allowing one SPIFFE ID by rules (neither from nor to). */
const permission = (name = "t") => ({
  apiVersion: "kuma.io/v1alpha1",
  kind: "MeshTrafficPermission",
  metadata: { name, namespace: "shop" },
  spec: { targetRef: { kind: "Mesh" }, rules: [{ default: { allow: [{ spiffeID: { type: "Exact", value: "spiffe://default/ns/shop/sa/web" } }] } }] },
});
const BACKEND = { kind: "MeshService", name: "backend" };
const BY_LABEL = { kind: "MeshService", labels: { "kuma.io/display-name": "backend" } };

/** Whether `ref` counts as a consumer item: beside an item that surely produces, the policy mixes the two. */
function isConsumerItem(ref: unknown, version: KumaVersion = "2.14"): boolean {
  const producer = version === "3.0" ? BY_LABEL : BACKEND;
  const { violations } = validatePolicyObject(route([producer, ref]), version);
  return violations.some((v) => v.field === MIXED.field && v.message === MIXED.message);
}

test("normalize role › given a document with no type, kind or apiVersion, when validated, then it is read as universal (type missing)", (t) => {
  // Given name, mesh and spec only; when validated
  const { violations } = validatePolicyObject({ name: "p", mesh: "default", spec: { targetRef: { kind: "Mesh" } } });
  // Then the universal form's `type` is what is missing, and no CRD field is asked for
  t.true(violations.some((v) => v.field === "type"), JSON.stringify(violations));
  t.false(violations.some((v) => v.field === "apiVersion" || v.field === "kind"), JSON.stringify(violations));
});

test("normalize role › given a document of an unknown type, when validated, then its violations are the envelope's only and no warnings", (t) => {
  // Given type Nope; when validated; then exactly the type violation, no spec checks, no warnings
  const r = validatePolicyObject({ type: "Nope", name: "p", mesh: "default", spec: {} });
  t.is(r.policy, undefined);
  t.deepEqual(r.violations.map((v) => v.field), ["type"]);
  t.deepEqual(r.warnings, []);
});

test("normalize role › given a document without a name, when validated, then the one name violation says it must be defined", (t) => {
  // Given a universal policy with no name (and a CRD with no metadata.name); when validated
  const universal = validatePolicyObject({ type: "MeshTrafficPermission", mesh: "default", spec: permission().spec });
  const crd = validatePolicyObject({ ...permission(), metadata: {} });
  // Then one violation on the name field, and it is about the missing value
  t.deepEqual(universal.violations.filter((v) => v.field === "name").length, 1, JSON.stringify(universal.violations));
  t.deepEqual(crd.violations.filter((v) => v.field === "metadata.name").length, 1, JSON.stringify(crd.violations));
});

const mixes = (doc: { violations: { field: string; message: string }[] }) => doc.violations.some((v) => v.field === MIXED.field && v.message === MIXED.message);
const OTHER_NS = { kind: "MeshService", name: "b", namespace: "other" };

test("normalize role › given from items beside producing and consuming to items, when validated, then the role is workload-owner (no mix)", (t) => {
  // Given a namespaced route with a from item and to items of its own and another namespace
  const doc = route([BACKEND, OTHER_NS]);
  const withFrom = { ...doc, spec: { ...doc.spec, from: [{ targetRef: { kind: "Mesh" } }] } };
  // When validated; then the from items decide the role: the to items are not weighed, so no mix violation
  t.false(mixes(validatePolicyObject(withFrom)));
  // and without them the items are mixed
  t.true(mixes(validatePolicyObject(doc)));
});

test("normalize role › given an empty from beside producing and consuming to items, when validated, then the items are weighed (mixed)", (t) => {
  // Given from: [] and to items of its own and another namespace; when validated; then the empty from counts for nothing
  const doc = route([BACKEND, OTHER_NS]);
  t.true(mixes(validatePolicyObject({ ...doc, spec: { ...doc.spec, from: [] } })));
});

test("normalize role › given neither from nor to, when validated, then the role is workload-owner", (t) => {
  // Given a namespaced MeshTrafficPermission with rules only; when validated; then it is the workload owner's
  const r = validatePolicyObject(permission());
  t.deepEqual(r.violations, []);
  t.is(r.policy?.role, "workload-owner");
});

test("normalize role › given to items that are not objects or have no targetRef, when validated, then they are consumer items (no throw)", (t) => {
  // Given items `"x"` and `{}` beside a producing item; when validated; then each is a consumer item
  t.true(isConsumerItem("x"));
  t.true(isConsumerItem(undefined));
  t.true(validatePolicyObject(route(["x"])).violations.length > 0);
  const noRef = validatePolicyObject({ ...route([]), spec: { targetRef: { kind: "Mesh" }, to: [BACKEND, {}].map((x, i) => (i === 0 ? { targetRef: x, rules: RULES } : x)) } });
  t.true(noRef.violations.some((v) => v.field === MIXED.field && v.message === MIXED.message), JSON.stringify(noRef.violations));
});

test("normalize role › given a MeshHTTPRoute ref of its own namespace, when validated, then it is a producer item", (t) => {
  // Given a to item naming a MeshHTTPRoute; when validated beside a MeshService of its namespace; then no mix
  t.false(isConsumerItem({ kind: "MeshHTTPRoute", name: "other-route" }));
});

test("normalize role › given a MeshService ref without a name, when validated, then it is a consumer item", (t) => {
  // Given a to item selecting MeshServices by labels (2.14: not one named service); then a consumer item
  t.true(isConsumerItem({ kind: "MeshService", labels: { app: "backend" } }));
});

test("normalize role › under 3.0, given refs whose labels do not name one service, when validated, then they are consumer items", (t) => {
  // Given refs with a name but no labels, a non-string display name, and an empty one
  t.true(isConsumerItem({ kind: "MeshService", name: "backend" }, "3.0"));
  t.true(isConsumerItem({ kind: "MeshService", labels: { "kuma.io/display-name": 5 } }, "3.0"));
  t.true(isConsumerItem({ kind: "MeshService", labels: { "kuma.io/display-name": "" } }, "3.0"));
});

test("normalize role › under 3.0, given a display name with an empty namespace label, when validated, then it is a producer item", (t) => {
  // Given k8s.kuma.io/namespace "" beside the display name; then it names the policy's own namespace's service
  t.false(isConsumerItem({ kind: "MeshService", labels: { "kuma.io/display-name": "backend", "k8s.kuma.io/namespace": "" } }, "3.0"));
});

const crdNamed = (name: string) => permission(name);
const RFC = /^invalid characters\. A /;

test("normalize role › given a name with capitals, when validated for 2.10 on, then an RFC 1123 violation on the CRD's metadata.name; 2.9 loads it", (t) => {
  // Given metadata.name "Backend" (a resource name, not a DNS subdomain)
  // When validated by 2.14 and by 2.9
  const strict = validatePolicyObject(crdNamed("Backend"), "2.14");
  const lax = validatePolicyObject({ ...crdNamed("Backend"), spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Allow" } }] } }, "2.9");
  // Then 2.14 rejects it on metadata.name, and 2.9 accepts it
  t.deepEqual(strict.violations.map((v) => v.field), ["metadata.name"]);
  t.regex(strict.violations[0]!.message, RFC);
  t.deepEqual(lax.violations, []);
});

test("normalize role › given a bad name beside another field's violation, when validated, then both are reported", (t) => {
  // Given a universal policy named "Backend" with an empty mesh; when validated by 2.14; then the mesh and the name violations
  const r = validatePolicyObject({ type: "MeshTrafficPermission", mesh: "", name: "Backend", spec: permission().spec });
  t.true(r.violations.some((v) => v.field === "mesh"), JSON.stringify(r.violations));
  t.true(r.violations.some((v) => v.field === "name" && RFC.test(v.message)), JSON.stringify(r.violations));
});

test("normalize role › given a name that is not a resource name, when validated, then one violation on it, not a second for RFC 1123", (t) => {
  // Given a name starting with '-'; when validated by 2.14; then only the resource-name violation
  const r = validatePolicyObject(crdNamed("-backend"), "2.14");
  t.deepEqual(r.violations.filter((v) => v.field === "metadata.name").length, 1, JSON.stringify(r.violations));
});

test("normalize role › given a 253-character lowercase name, when validated by 2.14, then it loads", (t) => {
  // Given the longest name RFC 1123 allows; when validated; then no violation
  const r = validatePolicyObject(crdNamed("a".repeat(253)), "2.14");
  t.deepEqual(r.violations, []);
});

// validate rules only › the Kuma 3.0 checks of MeshTrafficPermission, MeshFaultInjection and MeshRateLimit (no `from`): `to` by scope, its items' paths, and the rules.
import test from "ava";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";

type Pairs = [string, string][];
const ABORT = { http: [{ abort: { httpStatus: 500, percentage: 50 } }] };
const LIMIT = { local: { http: { requestRate: { num: 5, interval: "1s" } } } };
const SIDECAR = { kind: "Dataplane", labels: { app: "web" } };
const MESH = { kind: "Mesh" };
const mfi = (spec: unknown) => ({ type: "MeshFaultInjection", mesh: "default", name: "f", spec });
const mrl = (spec: unknown) => ({ type: "MeshRateLimit", mesh: "default", name: "m", spec });
const mtp = (spec: unknown) => ({ type: "MeshTrafficPermission", mesh: "default", name: "p", spec });
const ALLOW_A = [{ default: { allow: [{ spiffeID: { type: "Prefix", value: "spiffe://a" } }] } }];

const verdict = test.macro({
  exec(t, doc: unknown, expected: Pairs) {
    // Given a policy; when validated as Kuma 3.0; then exactly these violations (none: it loads)
    const r = validatePolicyObject(doc, "3.0");
    t.deepEqual(r.violations.map((v): [string, string] => [v.field, v.message]), expected);
    t.is(r.policy === undefined, expected.length > 0);
  },
  title: (provided = "") => `validate rules only › ${provided}`,
});

// `to` of MFI/MRL: refused only when it lists items and the scope has no gateway
test("an empty `to` under a sidecar scope loads (MeshFaultInjection)", verdict, mfi({ targetRef: SIDECAR, to: [] }), []);
test("an empty `to` under a sidecar scope loads (MeshRateLimit)", verdict, mrl({ targetRef: SIDECAR, to: [], rules: [{ default: LIMIT }] }), []);
test("a `to` that is no list under a sidecar scope must be a list", verdict, mfi({ targetRef: SIDECAR, to: "all" }), [["spec.to", "must be a list"]]);
test("an empty `to` next to rules under the mesh scope loads", verdict, mfi({ targetRef: MESH, to: [], rules: [{ default: ABORT }] }), []);
test("a `to` item of a kind other than Mesh names its own path", verdict, mfi({ targetRef: MESH, to: [{ targetRef: SIDECAR, default: ABORT }] }), [
  ["spec.to[0].targetRef.kind", "value 'Dataplane' is not supported"],
]);

// rules
test("a MeshFaultInjection rule's default is checked", verdict, mfi({ targetRef: MESH, rules: [{ default: { http: [{ abort: { httpStatus: 1000, percentage: 50 } }] } }] }), [
  ["spec.rules[0].default.http[0].abort.httpStatus", "must be in inclusive range [100, 599]"],
]);
test("a MeshRateLimit with `to` and no rules loads", verdict, mrl({ targetRef: MESH, to: [{ targetRef: MESH, default: LIMIT }] }), []);
test("a MeshTrafficPermission with rules loads", verdict, mtp({ targetRef: MESH, rules: ALLOW_A }), []);
test("a MeshTrafficPermission with an empty `to` next to its rules is refused", verdict, mtp({ targetRef: MESH, to: [], rules: ALLOW_A }), [
  ["spec.to", "must not be defined (MeshTrafficPermission only supports rules)"],
]);

// validate target ref › targetRef validation by kind, position and Kuma version: each rejection with Kuma's field path and message, the accepted edges, and which top-level scopes include gateways.
import test from "ava";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";
import type { KumaVersion } from "../../extproc/policy/model/kuma-version.js";

type Pairs = [string, string][];
const ANY_RULES = [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], default: {} }];
/** A MeshHTTPRoute scoped by `top` routing to `to` (the top-level ref allows gateway listener tags). */
const route = (top: unknown, to: unknown = { kind: "MeshService", name: "backend" }) => ({
  type: "MeshHTTPRoute",
  mesh: "default",
  name: "r",
  spec: { targetRef: top, to: [{ targetRef: to, rules: ANY_RULES }] },
});
/** A route to `to` from the whole mesh. */
const to = (ref: unknown) => route({ kind: "Mesh" }, ref);
/** A gateway route: MeshGateway scope, Mesh backends. */
const gatewayRoute = (top: unknown) => route(top, { kind: "Mesh" });
const LIMIT = { local: { http: { disabled: true } } };
const mrlFrom = (top: unknown) => ({ type: "MeshRateLimit", mesh: "default", name: "m", spec: { targetRef: top, from: [{ targetRef: { kind: "Mesh" }, default: LIMIT }] } });
const mrlTo = (top: unknown) => ({ type: "MeshRateLimit", mesh: "default", name: "m", spec: { targetRef: top, to: [{ targetRef: { kind: "Mesh" }, default: LIMIT }] } });
const mtpFrom = (ref: unknown) => ({ type: "MeshTrafficPermission", mesh: "default", name: "p", spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: ref, default: { action: "Allow" } }] } });

const verdict = test.macro({
  exec(t, doc: unknown, expected: Pairs, version: KumaVersion = "2.14") {
    // Given a policy; when validated; then exactly these violations (none: it loads)
    const r = validatePolicyObject(doc, version);
    t.deepEqual(r.violations.map((v): [string, string] => [v.field, v.message]), expected);
    t.is(r.policy === undefined, expected.length > 0);
  },
  title: (provided = "") => `validate target ref › ${provided}`,
});

const NAME_CHARS = "invalid characters: must consist of lower case alphanumeric characters, '-', '.' and '_'.";

// name
test("given a MeshGateway without name, when validated, then name must be set", verdict, gatewayRoute({ kind: "MeshGateway" }), [["spec.targetRef.name", "must be set when kind is MeshGateway"]]);
test("given a MeshServiceSubset with an empty name at 2.6, when validated, then name must be set", verdict, route({ kind: "MeshServiceSubset", name: "", tags: { v: "1" } }), [
  ["spec.targetRef.name", "must be set when kind is MeshServiceSubset"],
], "2.6");
test("given a top-level MeshHTTPRoute without name or labels at 2.14, when validated, then one of them must be set", verdict, mrlTo({ kind: "MeshHTTPRoute" }), [
  ["spec.targetRef", "name or labels must be set when kind is MeshHTTPRoute"],
]);
test("given a top-level MeshHTTPRoute with a name at 2.6, when validated, then it loads", verdict, mrlTo({ kind: "MeshHTTPRoute", name: "x" }), [], "2.6");
test("given a MeshService named in upper case at 2.14, when validated, then the name has invalid characters", verdict, to({ kind: "MeshService", name: "Backend" }), [["spec.to[0].targetRef.name", NAME_CHARS]]);
test("given a MeshService named with a trailing space at 2.14, when validated, then the name has invalid characters", verdict, to({ kind: "MeshService", name: "backend " }), [["spec.to[0].targetRef.name", NAME_CHARS]]);
test("given a MeshService named by a number at 2.14, when validated, then the name must be a string", verdict, to({ kind: "MeshService", name: 5 }), [["spec.to[0].targetRef.name", "must be a string"]]);
test("given a MeshService named with dots, dashes and underscores at 2.14, when validated, then it loads", verdict, to({ kind: "MeshService", name: "back-end_1.v2" }), []);
test("given a Dataplane named by a number, when validated, then the name must be a string", verdict, route({ kind: "Dataplane", name: 5 }), [["spec.targetRef.name", "must be a string"]]);
test("given a ref carrying mesh, when validated, then mesh must not be set", verdict, route({ kind: "Mesh", mesh: "default" }), [["spec.targetRef.mesh", "must not be set"]]);

// labels, namespace, sectionName (2.8+)
test("given a MeshService with empty labels and no name, when validated, then name or labels must be set", verdict, to({ kind: "MeshService", labels: {} }), [
  ["spec.to[0].targetRef", "name or labels must be set when kind is MeshService"],
]);
test("given a top-level MeshHTTPRoute chosen by labels, when validated, then it loads", verdict, mrlTo({ kind: "MeshHTTPRoute", labels: { app: "web" } }), []);
test("given a MeshMultiZoneService chosen by labels with a sectionName, when validated, then it loads", verdict, to({ kind: "MeshMultiZoneService", labels: { app: "web" }, sectionName: "http" }), []);
test("given a MeshService with name, namespace and sectionName, when validated, then it loads", verdict, to({ kind: "MeshService", name: "backend", namespace: "ns", sectionName: "http" }), []);
test("given a MeshExternalService chosen by labels, when validated, then it loads", verdict, to({ kind: "MeshExternalService", labels: { app: "db" } }), []);
test("given a MeshExternalService with a sectionName, when validated, then sectionName must not be set", verdict, to({ kind: "MeshExternalService", name: "db", sectionName: "x" }), [
  ["spec.to[0].targetRef.sectionName", "must not be set with kind MeshExternalService"],
]);
test("given labels with a number value, when validated, then that label must be a string", verdict, to({ kind: "MeshService", labels: { app: 5 } }), [["spec.to[0].targetRef.labels.app", "must be a string"]]);
test("given a namespace that is a number, when validated, then namespace must be a string", verdict, to({ kind: "MeshService", name: "backend", namespace: 5 }), [["spec.to[0].targetRef.namespace", "must be a string"]]);
test("given a MeshService with labels and a namespace, when validated, then either labels or name and namespace", verdict, to({ kind: "MeshService", labels: { app: "web" }, namespace: "ns" }), [
  ["spec.to[0].targetRef.labels", "either labels or name and namespace must be specified"],
]);
test("given a MeshService with labels and a name, when validated, then either labels or name and namespace", verdict, to({ kind: "MeshService", labels: { app: "web" }, name: "web" }), [
  ["spec.to[0].targetRef.labels", "either labels or name and namespace must be specified"],
]);
test("given a MeshExternalService with labels and a name, when validated, then either labels or name", verdict, to({ kind: "MeshExternalService", labels: { app: "db" }, name: "db" }), [
  ["spec.to[0].targetRef.labels", "either labels or name must be specified"],
]);
test("given a Mesh with labels and a namespace, when validated, then each must not be set and nothing more", verdict, route({ kind: "Mesh", labels: { app: "web" }, namespace: "ns" }), [
  ["spec.targetRef.labels", "must not be set with kind Mesh"],
  ["spec.targetRef.namespace", "must not be set with kind Mesh"],
]);
test("given a top-level MeshService with a sectionName in an outbound-only policy, when validated, then it loads (only a Dataplane's is for inbound policies)", verdict, route({ kind: "MeshService", labels: { app: "web" }, sectionName: "http" }), []);
test("given a top-level Dataplane with a sectionName in an outbound-only policy, when validated, then sectionName is for inbound policies", verdict, route({ kind: "Dataplane", labels: { app: "web" }, sectionName: "http" }), [
  ["spec.targetRef.sectionName", "can only be used with inbound policies"],
]);

// tags
test("given a MeshSubset with empty tags at 2.6, when validated, then tags must have at least one element", verdict, route({ kind: "MeshSubset", tags: {} }), [["spec.targetRef.tags", "must have at least one element"]], "2.6");
test("given a MeshGateway with listener tags, when validated, then it loads", verdict, gatewayRoute({ kind: "MeshGateway", name: "gw", tags: { port: "80" } }), []);
test("given a MeshGateway with a number tag value, when validated, then that tag must be a string", verdict, gatewayRoute({ kind: "MeshGateway", name: "gw", tags: { port: 80 } }), [["spec.targetRef.tags.port", "must be a string"]]);
test("given a top-level MeshService with tags at 2.6, when validated, then tags must not be set", verdict, route({ kind: "MeshService", name: "web", tags: { v: "1" } }), [["spec.targetRef.tags", "must not be set with kind MeshService"]], "2.6");
test("given a Mesh with empty tags, when validated, then it loads", verdict, route({ kind: "Mesh", tags: {} }), []);

// proxyTypes
test("given proxyTypes on a from[] Mesh ref at 2.6, when validated, then proxyTypes must not be set", verdict, mtpFrom({ kind: "Mesh", proxyTypes: ["Sidecar"] }), [
  ["spec.from[0].targetRef.proxyTypes", "must not be set with kind Mesh"],
], "2.6");
test("given proxyTypes on a top-level MeshService at 2.6, when validated, then proxyTypes must not be set", verdict, route({ kind: "MeshService", name: "web", proxyTypes: ["Sidecar"] }), [
  ["spec.targetRef.proxyTypes", "must not be set with kind MeshService"],
], "2.6");
test("given proxyTypes Gateway on a top-level MeshSubset at 2.6, when validated, then it loads", verdict, route({ kind: "MeshSubset", tags: { a: "b" }, proxyTypes: ["Gateway"] }), [], "2.6");
test("given proxyTypes that is not a list, when validated, then proxyTypes must be a list", verdict, route({ kind: "Mesh", proxyTypes: "Sidecar" }), [["spec.targetRef.proxyTypes", "must be a list"]]);
test("given an unknown proxy type, when validated, then that entry must be Sidecar or Gateway", verdict, route({ kind: "Mesh", proxyTypes: ["Ingress"] }), [["spec.targetRef.proxyTypes[0]", "must be one of Sidecar, Gateway"]]);

// gateway scope (MeshRateLimit `from` is for sidecars only)
const GATEWAY_FROM: Pairs = [["spec.from", "must not be defined when the scope includes a Gateway, select only proxyType Sidecar"]];
test("given a MeshGateway scope with from, when validated, then from is refused", verdict, mrlFrom({ kind: "MeshGateway", name: "gw" }), GATEWAY_FROM);
test("given a MeshHTTPRoute scope with from, when validated, then from is refused", verdict, mrlFrom({ kind: "MeshHTTPRoute", name: "r" }), GATEWAY_FROM);
test("given a MeshSubset scope of every proxy type with from, when validated, then from is refused", verdict, mrlFrom({ kind: "MeshSubset", tags: { a: "b" } }), GATEWAY_FROM);
test("given a MeshSubset scope of sidecars with from, when validated, then it loads", verdict, mrlFrom({ kind: "MeshSubset", tags: { a: "b" }, proxyTypes: ["Sidecar"] }), []);
test("given a Mesh scope with empty proxyTypes at 2.6, when validated, then from is refused", verdict, mrlFrom({ kind: "Mesh", proxyTypes: [] }), GATEWAY_FROM, "2.6");
test("given a MeshService scope with from, when validated, then it loads", verdict, mrlFrom({ kind: "MeshService", name: "web" }), []);

// which kinds each position names (validate-items.ts): every client kind in MTP `from`, Dataplane at MTP's top,
// MeshGateway at a proxy scope, every real service kind as a route's `to`
const mtp = (top: unknown, from: unknown) => ({ type: "MeshTrafficPermission", mesh: "default", name: "p", spec: { targetRef: top, from: [{ targetRef: from, default: { action: "Allow" } }] } });
for (const [from, version] of [
  [{ kind: "Mesh" }, "2.14"],
  [{ kind: "MeshSubset", tags: { app: "web" } }, "2.14"],
  [{ kind: "MeshService", name: "web" }, "2.14"],
  [{ kind: "MeshServiceSubset", name: "web", tags: { v: "1" } }, "2.14"],
] as const) {
  test(`given an MTP from a ${from.kind} at ${version}, when validated, then it loads`, verdict, mtp({ kind: "Mesh" }, from), [], version);
}
test("given an MTP whose top-level targetRef is a Dataplane, when validated, then it loads", verdict, mtp({ kind: "Dataplane", labels: { app: "web" } }, { kind: "Mesh" }), []);
test("given an MTP whose top-level targetRef is a MeshGateway, when validated, then that kind is not supported", verdict, mtp({ kind: "MeshGateway", name: "gw" }, { kind: "Mesh" }), [
  ["spec.targetRef.kind", "must be one of Mesh, MeshSubset, MeshService, MeshServiceSubset, Dataplane"],
]);
test("given an MRL scoped to a MeshGateway with to, when validated, then it loads", verdict, mrlTo({ kind: "MeshGateway", name: "gw" }), []);
test("given a route to a MeshExternalService by name at 2.14, when validated, then it loads", verdict, to({ kind: "MeshExternalService", name: "db" }), []);
test("given a route to a MeshMultiZoneService by name at 2.14, when validated, then it loads", verdict, to({ kind: "MeshMultiZoneService", name: "web" }), []);
test("given a route to a MeshMultiZoneService without name or labels at 2.14, when validated, then one of them must be set", verdict, to({ kind: "MeshMultiZoneService" }), [
  ["spec.to[0].targetRef", "name or labels must be set when kind is MeshMultiZoneService"],
]);
test("given a route to a MeshMultiZoneService chosen by labels at 2.14, when validated, then it loads", verdict, to({ kind: "MeshMultiZoneService", labels: { app: "web" } }), []);
test("given a route to a MeshService chosen by labels with a sectionName at 2.14, when validated, then it loads", verdict, to({ kind: "MeshService", labels: { app: "web" }, sectionName: "http" }), []);

// Kuma 3.0: refs are kind, labels and sectionName only (validate-labels-ref.ts)
/** A 3.0 route scoped by `top` to a MeshService chosen by labels. */
const route30 = (top: unknown) => route(top, { kind: "MeshService", labels: { app: "backend" } });
test("given a route to a MeshService chosen by labels with a sectionName at 3.0, when validated, then it loads", verdict, to({ kind: "MeshService", labels: { app: "web" }, sectionName: "http" }), [], "3.0");
for (const kind of ["MeshService", "MeshExternalService", "MeshMultiZoneService"]) {
  test(`given a route to a ${kind} without labels at 3.0, when validated, then labels must be set`, verdict, to({ kind }), [["spec.to[0].targetRef.labels", `must be set when kind is ${kind}`]], "3.0");
}
test("given a route to a MeshMultiZoneService chosen by labels with a sectionName at 3.0, when validated, then it loads", verdict, to({ kind: "MeshMultiZoneService", labels: { app: "web" }, sectionName: "http" }), [], "3.0");
test("given a route to a MeshExternalService with a sectionName at 3.0, when validated, then sectionName must not be set", verdict, to({ kind: "MeshExternalService", labels: { app: "db" }, sectionName: "tls" }), [
  ["spec.to[0].targetRef.sectionName", "must not be set with kind MeshExternalService"],
], "3.0");
test("given a Mesh scope with a sectionName at 3.0, when validated, then sectionName must not be set", verdict, route30({ kind: "Mesh", sectionName: "http" }), [
  ["spec.targetRef.sectionName", "must not be set with kind Mesh"],
], "3.0");
test("given a Mesh scope with an empty sectionName at 3.0, when validated, then it loads", verdict, route30({ kind: "Mesh", sectionName: "" }), [], "3.0");
test("given a Mesh scope with a number sectionName at 3.0, when validated, then sectionName must be a string", verdict, route30({ kind: "Mesh", sectionName: 5 }), [["spec.targetRef.sectionName", "must be a string"]], "3.0");
test("given a Mesh scope with empty labels at 3.0, when validated, then it loads", verdict, route30({ kind: "Mesh", labels: {} }), [], "3.0");
test("given a route to a MeshService with empty labels at 3.0, when validated, then labels must be set", verdict, to({ kind: "MeshService", labels: {} }), [["spec.to[0].targetRef.labels", "must be set when kind is MeshService"]], "3.0");
test("given labels with a number value at 3.0, when validated, then that label must be a string", verdict, to({ kind: "MeshService", labels: { app: 5 } }), [["spec.to[0].targetRef.labels.app", "must be a string"]], "3.0");
test("given a ref without kind at 3.0, when validated, then kind must be defined", verdict, route30({ labels: { app: "web" } }), [["spec.targetRef.kind", "must be defined"]], "3.0");
test("given a ref with an empty kind at 3.0, when validated, then kind must be defined", verdict, route30({ kind: "" }), [["spec.targetRef.kind", "must be defined"]], "3.0");
test("given a ref with a number kind at 3.0, when validated, then that kind is not supported", verdict, route30({ kind: 5 }), [["spec.targetRef.kind", "value '5' is not supported"]], "3.0");
test("given a top-level Dataplane with a sectionName in an outbound-only policy at 3.0, when validated, then sectionName is for inbound policies", verdict, route30({ kind: "Dataplane", labels: { app: "web" }, sectionName: "http" }), [
  ["spec.targetRef.sectionName", "can only be used with inbound policies"],
], "3.0");
test("given a top-level Dataplane with a sectionName in an MTP, when validated, then it loads", verdict, mtp({ kind: "Dataplane", labels: { app: "web" }, sectionName: "http" }, { kind: "Mesh" }), []);
test("given an MTP whose from item is not an object, when validated, then that item must be an object", verdict, { type: "MeshTrafficPermission", mesh: "default", name: "p", spec: { targetRef: { kind: "Mesh" }, from: [5] } }, [
  ["spec.from[0]", "must be an object"],
]);

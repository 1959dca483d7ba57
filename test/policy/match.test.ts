// match › top-level selection of inbounds and subset matching of multi-valued client tags.
import test from "ava";
import type { Dataplane } from "../../extproc/policy/documents/dataplane.js";
import { versionTraits, type KumaVersion } from "../../extproc/policy/model/kuma-version.js";
import { asSubset, policySelectsDataplane, selectedInbounds, selectsInbound, subsetMatches, tagSet } from "../../extproc/policy/selection/match.js";
import type { Policy, Tag, TargetRef } from "../../extproc/policy/model/types.js";

const dp: Dataplane = { mesh: "default", name: "b-1", proxyType: "Sidecar", inbounds: [{ name: "8080", port: 8080, tags: { "kuma.io/service": "backend", version: "v1" } }] };
const ib = dp.inbounds[0]!;

const selects = test.macro({
  exec(t, ref: TargetRef, expected: boolean) {
    t.is(selectsInbound(ref, ib, dp), expected);
  },
  title: (provided = "", ref: TargetRef, expected: boolean) => `match › ${ref.kind} ${provided} ${expected ? "selects" : "does not select"} the inbound`,
});

test("", selects, { kind: "Mesh" }, true);
test("with proxyTypes Gateway", selects, { kind: "Mesh", proxyTypes: ["Gateway"] }, false);
test("version=v1", selects, { kind: "MeshSubset", tags: { version: "v1" } }, true);
test("version=*", selects, { kind: "MeshSubset", tags: { version: "*" } }, true);
test("team=*", selects, { kind: "MeshSubset", tags: { team: "*" } }, false);
test("backend", selects, { kind: "MeshService", name: "backend" }, true);
test("web", selects, { kind: "MeshService", name: "web" }, false);
test("backend v2", selects, { kind: "MeshServiceSubset", name: "backend", tags: { version: "v2" } }, false);
test("gateway", selects, { kind: "MeshGateway", name: "edge" }, false);
test("unknown route", selects, { kind: "MeshHTTPRoute", name: "r" }, false);

const client = test.macro({
  exec(t, subset: Tag[], tags: Record<string, string | string[]>, expected: boolean) {
    t.is(subsetMatches(subset, tagSet(tags)), expected);
  },
  title: (provided = "") => `match › subset ${provided}`,
});
const pos = (key: string, value: string): Tag => ({ key, value, not: false });
const neg = (key: string, value: string): Tag => ({ key, value, not: true });

test("empty matches everyone", client, [], {}, true);
test("positive needs the value", client, [pos("env", "dev")], { env: "prod" }, false);
test("positive among several values", client, [pos("env", "dev")], { env: ["prod", "dev"] }, true);
test("negation with missing key matches", client, [neg("env", "dev")], {}, true);
test("negation fails when any value equals", client, [neg("env", "dev")], { env: ["prod", "dev"] }, false);

test("match › a policy of another mesh selects no inbound, whatever its targetRef", (t) => {
  // given a Mesh-wide policy; when it belongs to mesh "other"; then none of this default-mesh proxy's inbounds
  const policy = { type: "MeshTrafficPermission", mesh: "default", name: "p", spec: { targetRef: { kind: "Mesh" } } } as unknown as Policy;
  t.deepEqual(selectedInbounds(policy, dp), [ib]);
  t.deepEqual(selectedInbounds({ ...policy, mesh: "other" }, dp), []);
});

test("match › asSubset of MeshServiceSubset is service plus tags", (t) => {
  t.deepEqual(asSubset({ kind: "MeshServiceSubset", name: "web", tags: { version: "v2" } }), [pos("kuma.io/service", "web"), pos("version", "v2")]);
  t.deepEqual(asSubset({ kind: "Mesh" }), []);
});

const labelled: Dataplane = { ...dp, labels: { app: "backend", team: "pay" }, inbounds: [{ name: "http", declaredName: "http", port: 8080, tags: { "kuma.io/service": "backend" } }, { name: "9090", port: 9090, tags: { "kuma.io/service": "admin" } }] };
const pol = (targetRef: TargetRef, extra: Partial<Policy> = {}): Policy => ({ type: "MeshTrafficPermission", mesh: "default", name: "p", labels: {}, spec: { targetRef, rules: [] }, displayName: "p", role: "system", shadow: false, warnings: [], ...extra });
const inboundsOf = (p: Policy, version: KumaVersion = "2.14") => selectedInbounds(p, labelled, { traits: versionTraits(version) }).map((i) => i.name);

test("match › Dataplane labels select by exact resource labels", (t) => {
  t.deepEqual(inboundsOf(pol({ kind: "Dataplane", labels: { app: "backend" } })), ["http", "9090"]);
  t.deepEqual(inboundsOf(pol({ kind: "Dataplane", labels: { app: "*" } })), []);
});
test("match › Dataplane sectionName: a port selects an unnamed inbound from 2.12 only", (t) => {
  t.deepEqual(inboundsOf(pol({ kind: "Dataplane", sectionName: "9090" })), ["9090"]);
  t.deepEqual(inboundsOf(pol({ kind: "Dataplane", sectionName: "9090" }), "2.11"), []);
  t.deepEqual(inboundsOf(pol({ kind: "Dataplane", sectionName: "http" }), "2.11"), ["http"]);
});
test("match › policySelectsDataplane applies the namespace scope of workload-owner policies (2.9+)", (t) => {
  const p = pol({ kind: "Mesh" }, { role: "workload-owner", k8sNamespace: "shop" });
  t.false(policySelectsDataplane(p, labelled, { traits: versionTraits("2.14") }));
  t.true(policySelectsDataplane(p, { ...labelled, labels: { "k8s.kuma.io/namespace": "shop" } }, { traits: versionTraits("2.14") }));
  t.true(policySelectsDataplane(p, labelled, { traits: versionTraits("2.8") }));
});

/** A proxy of zone `zone` (undefined: no zone label) whose resource says where it originated. */
const zoned = (labels: Record<string, string>): Dataplane => ({ ...dp, labels });
const ZONE_EAST_POLICY: Partial<Policy> = { origin: "zone", zone: "east" };
const zoneCases: Array<[string, Partial<Policy>, Record<string, string>, KumaVersion, boolean]> = [
  ["a zone policy selects proxies of its own zone", ZONE_EAST_POLICY, { "kuma.io/origin": "zone", "kuma.io/zone": "east" }, "2.14", true],
  ["a zone policy does not select proxies of another zone", ZONE_EAST_POLICY, { "kuma.io/origin": "zone", "kuma.io/zone": "west" }, "2.14", false],
  ["a zone policy selects a zone proxy without a zone label", ZONE_EAST_POLICY, { "kuma.io/origin": "zone" }, "2.14", true],
  ["a zone policy selects a proxy not originated in a zone", ZONE_EAST_POLICY, { "kuma.io/zone": "west" }, "2.14", true],
  ["a zone policy selects a proxy synced from global", ZONE_EAST_POLICY, { "kuma.io/origin": "global", "kuma.io/zone": "west" }, "2.14", true],
  ["a global policy selects proxies of every zone", { origin: "global", zone: "east" }, { "kuma.io/origin": "zone", "kuma.io/zone": "west" }, "2.14", true],
  ["a zone policy without a zone label selects proxies of every zone", { origin: "zone" }, { "kuma.io/origin": "zone", "kuma.io/zone": "west" }, "2.14", true],
  ["a producer policy is not zone-scoped", { ...ZONE_EAST_POLICY, role: "producer" }, { "kuma.io/origin": "zone", "kuma.io/zone": "west" }, "2.14", true],
  ["a consumer policy of the proxy's namespace is zone-scoped", { ...ZONE_EAST_POLICY, role: "consumer", k8sNamespace: "shop" }, { "kuma.io/origin": "zone", "kuma.io/zone": "west", "k8s.kuma.io/namespace": "shop" }, "2.14", false],
  ["a consumer policy of the proxy's namespace and zone selects it", { ...ZONE_EAST_POLICY, role: "consumer", k8sNamespace: "shop" }, { "kuma.io/origin": "zone", "kuma.io/zone": "east", "k8s.kuma.io/namespace": "shop" }, "2.14", true],
  ["zone scoping starts at 2.9: 2.8 selects proxies of another zone", ZONE_EAST_POLICY, { "kuma.io/origin": "zone", "kuma.io/zone": "west" }, "2.8", true],
  ["zone scoping holds at 2.9", ZONE_EAST_POLICY, { "kuma.io/origin": "zone", "kuma.io/zone": "west" }, "2.9", false],
];

test("match › given zone-originated policies and proxies of several zones, when selecting, then a non-producer zone policy keeps to its zone (2.9+)", (t) => {
  for (const [name, extra, labels, version, expected] of zoneCases) {
    const p = pol({ kind: "Mesh" }, extra);
    t.is(policySelectsDataplane(p, zoned(labels), { traits: versionTraits(version) }), expected, name);
    t.deepEqual(selectedInbounds(p, zoned(labels), { traits: versionTraits(version) }).length > 0, expected, `${name} (selectedInbounds)`);
  }
});

test("match › given a Dataplane targetRef by name, when selecting, then name, namespace (the ref's, else the policy's) and the policy's zone must all match", (t) => {
  const proxy = (labels: Record<string, string>): Dataplane => ({ ...dp, name: "b-1.shop", labels: { "kuma.io/display-name": "b-1", ...labels } });
  const cases: Array<[string, TargetRef, Partial<Policy>, Record<string, string>, boolean]> = [
    ["the policy's namespace by default", { kind: "Dataplane", name: "b-1" }, { k8sNamespace: "shop" }, { "k8s.kuma.io/namespace": "shop" }, true],
    ["another namespace than the policy's", { kind: "Dataplane", name: "b-1" }, { k8sNamespace: "shop" }, { "k8s.kuma.io/namespace": "web" }, false],
    ["the ref's namespace over the policy's", { kind: "Dataplane", name: "b-1", namespace: "web" }, { k8sNamespace: "shop" }, { "k8s.kuma.io/namespace": "web" }, true],
    ["the ref's namespace excludes the policy's", { kind: "Dataplane", name: "b-1", namespace: "web" }, { k8sNamespace: "shop" }, { "k8s.kuma.io/namespace": "shop" }, false],
    ["another display name", { kind: "Dataplane", name: "b-2" }, { k8sNamespace: "shop" }, { "k8s.kuma.io/namespace": "shop" }, false],
    ["the policy's zone", { kind: "Dataplane", name: "b-1" }, { k8sNamespace: "shop", zone: "east" }, { "k8s.kuma.io/namespace": "shop", "kuma.io/zone": "east" }, true],
    ["another zone than the policy's", { kind: "Dataplane", name: "b-1" }, { k8sNamespace: "shop", zone: "east" }, { "k8s.kuma.io/namespace": "shop", "kuma.io/zone": "west" }, false],
  ];
  for (const [name, ref, extra, labels, expected] of cases) {
    const p = pol(ref, extra);
    t.is(selectsInbound(ref, proxy(labels).inbounds[0]!, proxy(labels), { traits: versionTraits("2.14") }, p), expected, name);
  }
  // and without a policy (a ref checked on its own): no namespace and no zone, so an unlabelled proxy of that name
  t.true(selectsInbound({ kind: "Dataplane", name: "b-1" }, ib, dp), "no policy: a proxy with that name and no labels");
});

test("match › given refs of each proxy kind, when matched against an inbound, then only the kind's own checks decide", (t) => {
  const gateway: Dataplane = { ...dp, proxyType: "Gateway" };
  const untagged: Dataplane = { ...dp, inbounds: [{ name: "8080", port: 8080, tags: {} }] };
  const cases: Array<[string, TargetRef, Dataplane, boolean]> = [
    ["Dataplane selects a sidecar", { kind: "Dataplane" }, dp, true],
    ["Dataplane does not select a gateway proxy", { kind: "Dataplane" }, gateway, false],
    ["MeshService without a name selects nothing, even an inbound without a service tag", { kind: "MeshService" } as TargetRef, untagged, false],
    ["MeshServiceSubset of another service", { kind: "MeshServiceSubset", name: "web", tags: { version: "v1" } }, dp, false],
    ["MeshServiceSubset of the service and its tags", { kind: "MeshServiceSubset", name: "backend", tags: { version: "v1" } }, dp, true],
  ];
  for (const [name, ref, proxy, expected] of cases) t.is(selectsInbound(ref, proxy.inbounds[0]!, proxy), expected, name);
});

test("match › given MeshHTTPRoute refs, when matched, then the named route's own targetRef decides, and a route of a route selects nothing", (t) => {
  const route = (name: string, targetRef: TargetRef): Policy => ({ ...pol(targetRef), type: "MeshHTTPRoute", name, displayName: name });
  const routes = new Map<string, Policy>([
    ["to-backend", route("to-backend", { kind: "MeshService", name: "backend" })],
    ["to-web", route("to-web", { kind: "MeshService", name: "web" })],
    ["to-route", route("to-route", { kind: "MeshHTTPRoute", name: "to-backend" })],
  ]);
  const cases: Array<[string, TargetRef, boolean]> = [
    ["a route of the inbound's service", { kind: "MeshHTTPRoute", name: "to-backend" }, true],
    ["a route of another service", { kind: "MeshHTTPRoute", name: "to-web" }, false],
    ["a route that targets a route", { kind: "MeshHTTPRoute", name: "to-route" }, false],
    ["a route not in the set", { kind: "MeshHTTPRoute", name: "missing" }, false],
  ];
  for (const [name, ref, expected] of cases) t.is(selectsInbound(ref, ib, dp, { routes }), expected, name);
});

test("match › 2.14: a Dataplane sectionName \"undefined\" does not select an inbound with neither name nor port", (t) => {
  // given an inbound known only by its index; when a Dataplane ref names section "undefined"; then it is not selected
  const bare = { name: "inbound[0]", tags: { "kuma.io/service": "backend" } };
  const other: Dataplane = { ...dp, inbounds: [bare] };
  t.false(selectsInbound({ kind: "Dataplane", sectionName: "undefined" }, bare, other, { traits: versionTraits("2.14") }));
  t.true(selectsInbound({ kind: "Dataplane" }, bare, other, { traits: versionTraits("2.14") }));
});

test("match › a MeshSubset selector's inherited keys are not tags it requires", (t) => {
  // given selector tags whose prototype carries an enumerable key; when matched; then only its own keys count
  const tags = Object.assign(Object.create({ team: "payments" }) as Record<string, string>, { version: "v1" });
  t.true(selectsInbound({ kind: "MeshSubset", tags }, ib, dp));
});

test("match › asSubset of a MeshService without a name requires an empty service; tags count only on subset kinds", (t) => {
  t.deepEqual(asSubset({ kind: "MeshService" }), [pos("kuma.io/service", "")]);
  t.deepEqual(asSubset({ kind: "MeshService", name: "web", tags: { version: "v2" } }), [pos("kuma.io/service", "web")]);
  t.deepEqual(asSubset({ kind: "Mesh", tags: { version: "v2" } }), []);
  t.deepEqual(asSubset({ kind: "MeshSubset", tags: { version: "v2" } }), [pos("version", "v2")]);
});

// inspect dataplane view › the engine's `_rules` view (dataplaneRules), Kuma's `to` merge order (mergeOrder) and "which dataplanes does this policy select" (dataplanesForPolicy), on small in-process inputs.
import test from "ava";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { resourcesOf } from "../../extproc/policy/documents/resources.js";
import type { Dataplane } from "../../extproc/policy/model/dataplane.js";
import type { Policy } from "../../extproc/policy/model/types.js";
import { versionTraits } from "../../extproc/policy/model/kuma-version.js";
import { dataplaneRules, dataplanesForPolicy, mergeOrder, type Meta, type ToEntry } from "../../extproc/policy/views/inspect.js";

function parsed(text: string) {
  const p = parsePolicyText(text, undefined, { kumaVersion: "2.14" });
  return { policies: p.policies, resources: resourcesOf(p.resources), rejected: p.rejected };
}

function meta(type: string, name: string, short: string, labels: Record<string, string> = {}): Meta {
  return { type, mesh: "default", name, labels, kri: `kri_${short}_default___${name}_` };
}

const service = (kind: string, mesh: string, name: string) => `type: ${kind}\nmesh: ${mesh}\nname: ${name}\nlabels: {kuma.io/display-name: ${name}}\nspec: {ports: [{port: 80, name: http}]}\n---\n`;
const route = (name: string, kind: string, to: string, path: string) =>
  `type: MeshHTTPRoute\nname: ${name}\nlabels: {team: ${name}}\nspec: {targetRef: {kind: Mesh}, to: [{targetRef: {kind: ${kind}, name: ${to}}, rules: [{matches: [{path: {type: PathPrefix, value: ${path}}}], default: {}}]}]}\n---\n`;

test("inspect dataplane view › MeshHTTPRoute: to-rules per kuma.io/service and to-resource rules per service of this mesh, each in name order with only the routes that reach it", (t) => {
  // given services out of name order (one in another mesh, one no route reaches, a MeshMultiZoneService and a MeshService both named orders) and routes declared payments first
  const { policies, resources, rejected } = parsed(
    service("MeshService", "default", "payments") + service("MeshService", "other", "orders") + service("MeshMultiZoneService", "default", "orders") + service("MeshService", "default", "orders") +
      service("MeshService", "default", "idle") + route("pay", "MeshService", "payments", "/p") + route("ord", "MeshService", "orders", "/o") + route("mz", "MeshMultiZoneService", "orders", "/z"),
  );
  t.deepEqual(rejected, []);
  const dp: Dataplane = { mesh: "default", name: "web-1", proxyType: "Sidecar", labels: { app: "web" }, inbounds: [{ name: "inbound[0]", tags: { "kuma.io/service": "web" } }] };
  // when the view is computed
  const view = dataplaneRules(policies, dp, { kumaVersion: "2.14", resources });
  // then the dataplane's meta, and one MeshHTTPRoute rule
  t.deepEqual(view.resource, { type: "Dataplane", mesh: "default", name: "web-1", labels: { app: "web" } });
  t.deepEqual(view.httpMatches, []);
  const conf = (path: string) => ({ rules: [{ matches: [{ path: { type: "PathPrefix", value: path } }], default: {} }] });
  const [ord, pay, mz] = [meta("MeshHTTPRoute", "ord", "mhttpr", { team: "ord" }), meta("MeshHTTPRoute", "pay", "mhttpr", { team: "pay" }), meta("MeshHTTPRoute", "mz", "mhttpr", { team: "mz" })];
  const svcMeta = (kind: string, name: string) => ({ type: kind, mesh: "default", name, labels: { "kuma.io/display-name": name } });
  t.deepEqual(view.rules, [
    {
      type: "MeshHTTPRoute",
      toRules: [
        { matchers: [{ key: "kuma.io/service", value: "orders", not: false }], conf: conf("/o"), origin: [ord] },
        { matchers: [{ key: "kuma.io/service", value: "payments", not: false }], conf: conf("/p"), origin: [pay] },
      ],
      toResourceRules: [
        { resourceMeta: svcMeta("MeshMultiZoneService", "orders"), resourceSectionName: "http", conf: [conf("/z")], origin: [{ resourceMeta: mz, ruleIndex: 0 }] },
        { resourceMeta: svcMeta("MeshService", "orders"), resourceSectionName: "http", conf: [conf("/o")], origin: [{ resourceMeta: ord, ruleIndex: 0 }] },
        { resourceMeta: svcMeta("MeshService", "payments"), resourceSectionName: "http", conf: [conf("/p")], origin: [{ resourceMeta: pay, ruleIndex: 0 }] },
      ],
      fromRules: [],
      inboundRules: [],
      warnings: [],
    },
  ]);
});

const FROM_POLICIES = `
type: MeshTrafficPermission
name: web-in
labels: {team: shop}
spec: {targetRef: {kind: MeshService, name: backend}, from: [{targetRef: {kind: MeshService, name: web}, default: {action: Allow}}]}
---
type: MeshTrafficPermission
name: base
spec: {targetRef: {kind: Mesh}, from: [{targetRef: {kind: Mesh}, default: {action: Deny}}]}
---
type: MeshRateLimit
name: slow
spec: {targetRef: {kind: Mesh, proxyTypes: [Sidecar]}, from: [{targetRef: {kind: Mesh}, default: {local: {http: {requestRate: {num: 5, interval: 1s}}}}}]}
`;

const BACKEND: Dataplane = {
  mesh: "default", name: "backend-1", proxyType: "Sidecar", labels: {},
  inbounds: [{ name: "http", declaredName: "http", port: 8080, tags: { "kuma.io/service": "backend" } }, { name: "inbound[1]", tags: { "kuma.io/service": "backend" } }],
};

test("inspect dataplane view › legacy from rules per inbound, types in name order, and the MeshTrafficPermission warning when the Mesh has mTLS off", (t) => {
  // given from-based MTPs and a MeshRateLimit, a Mesh with mTLS off, and a named inbound and an unnamed one without a port
  const { policies, resources, rejected } = parsed("type: Mesh\nname: default\nmtls: {backends: [{name: ca-1, type: builtin}]}\n---\n" + FROM_POLICIES);
  t.deepEqual(rejected, []);
  // when the view is computed
  const view = dataplaneRules(policies, BACKEND, { kumaVersion: "2.14", resources });
  // then MeshRateLimit comes before MeshTrafficPermission, each inbound has its from rules (an unnamed inbound without name, port 0),
  // the web client's rule is the MeshService policy's Allow, everyone else's the Mesh policy's Deny, and MTP is warned about
  const slow = meta("MeshRateLimit", "slow", "mrl");
  const [base, webIn] = [meta("MeshTrafficPermission", "base", "mtp"), meta("MeshTrafficPermission", "web-in", "mtp", { team: "shop" })];
  const mtpRules = [
    { matchers: [{ key: "kuma.io/service", value: "web", not: false }], conf: { action: "Allow" }, origin: [base, webIn] },
    { matchers: [{ key: "kuma.io/service", value: "web", not: true }], conf: { action: "Deny" }, origin: [base] },
  ];
  const mrlRules = [{ matchers: [], conf: { local: { http: { requestRate: { num: 5, interval: "1s" } } } }, origin: [slow] }];
  const named = { name: "http", tags: { "kuma.io/service": "backend" }, port: 8080 };
  const unnamed = { tags: { "kuma.io/service": "backend" }, port: 0 };
  const rule = (type: string, rules: unknown, warnings: string[]) => ({ type, toRules: [], toResourceRules: [], fromRules: [{ inbound: named, rules }, { inbound: unnamed, rules }], inboundRules: [], warnings });
  t.deepEqual(view.rules as unknown, [rule("MeshRateLimit", mrlRules, []), rule("MeshTrafficPermission", mtpRules, ["Mesh is not Mtls enabled this policy will have no effect"])]);
  // and without a Mesh resource (mTLS unknown) there is no warning
  const unknown = dataplaneRules(policies, BACKEND, { kumaVersion: "2.14" });
  t.deepEqual(unknown.rules.map((r) => [r.type, r.warnings]), [["MeshRateLimit", []], ["MeshTrafficPermission", []]]);
});

function routePolicy(name: string, to: Array<{ kind: string; sectionName?: string }>, top = "Mesh"): Policy {
  const items = to.map((r) => `{targetRef: {kind: ${r.kind}, ${r.kind === "Mesh" ? "" : "name: orders"}${r.sectionName ? `, sectionName: ${r.sectionName}` : ""}}, rules: [{matches: [{path: {type: PathPrefix, value: /}}], default: {}}]}`);
  const text = `type: MeshHTTPRoute\nname: ${name}\nspec: {targetRef: {kind: ${top}${top === "Mesh" ? "" : ", name: web"}}, to: [${items.join(", ")}]}\n`;
  const p = parsePolicyText(text, undefined, { kumaVersion: "2.14" });
  if (p.policies.length !== 1) throw new Error(JSON.stringify(p.rejected));
  return p.policies[0]!;
}

test("inspect dataplane view › mergeOrder sorts to entries by policy attributes, then target kind, then sectionName, then name", (t) => {
  // given entries of equal top-level policies with to kinds of decreasing rank and names out of order, and a policy with a more specific top level first
  const entry = (policy: Policy, toIndex = 0): ToEntry => ({ policy, toIndex, item: policy.spec.to![toIndex]! as ToEntry["item"] });
  const specific = routePolicy("a-specific", [{ kind: "MeshService" }], "MeshService");
  const mz = routePolicy("a-mz", [{ kind: "MeshMultiZoneService" }]);
  const ext = routePolicy("b-ext", [{ kind: "MeshExternalService" }]);
  const section = routePolicy("c-section", [{ kind: "MeshService", sectionName: "http" }]);
  const plain = routePolicy("d-plain", [{ kind: "MeshService" }]);
  const two = routePolicy("e-two", [{ kind: "MeshService", sectionName: "http" }, { kind: "MeshService" }]);
  const mzSection = routePolicy("f-mz-section", [{ kind: "MeshMultiZoneService", sectionName: "http" }]);
  // when merge-ordered (the last wins)
  const order = mergeOrder([entry(specific), entry(mz), entry(ext), entry(section), entry(plain), entry(two, 0), entry(two, 1), entry(mzSection)], versionTraits("2.14"));
  // then the less specific policies first; among them MeshService without a section, with one, then MeshExternalService, then MeshMultiZoneService
  // (a section counts for MeshService only); equal ones by name, the smaller (winning) name last
  t.deepEqual(order.map((e) => `${e.policy.name}[${e.toIndex}]`), ["e-two[1]", "d-plain[0]", "e-two[0]", "c-section[0]", "b-ext[0]", "f-mz-section[0]", "a-mz[0]", "a-specific[0]"]);
});

const MRL_BY_ROUTE = `
type: MeshRateLimit
name: by-route
spec: {targetRef: {kind: MeshHTTPRoute, name: r}, to: [{targetRef: {kind: Mesh}, default: {local: {http: {requestRate: {num: 1, interval: 1s}}}}}]}
`;

test("inspect dataplane view › dataplanesForPolicy resolves a MeshHTTPRoute target among the routes of the policy's mesh, and lists the selected dataplanes by name", (t) => {
  // given a policy on route r, the route r of its mesh (to web), and a route r of another mesh and a non-route policy named r (both to orders) listed after it
  const [policy] = parsed(MRL_BY_ROUTE).policies;
  const r = (mesh: string, type: string, on: string): Policy => {
    const doc = type === "MeshHTTPRoute"
      ? `type: MeshHTTPRoute\nmesh: ${mesh}\nname: r\nspec: {targetRef: {kind: MeshService, name: ${on}}, to: [{targetRef: {kind: MeshService, name: x}, rules: [{matches: [{path: {type: PathPrefix, value: /}}], default: {}}]}]}\n`
      : `type: MeshTrafficPermission\nmesh: ${mesh}\nname: r\nspec: {targetRef: {kind: MeshService, name: ${on}}, from: [{targetRef: {kind: Mesh}, default: {action: Allow}}]}\n`;
    return parsePolicyText(doc, undefined, { kumaVersion: "2.14" }).policies[0]!;
  };
  const dp = (name: string, svc: string): Dataplane => ({ mesh: "default", name, proxyType: "Sidecar", labels: {}, inbounds: [{ name: "http", port: 80, tags: { "kuma.io/service": svc } }] });
  const dataplanes = [dp("web-2", "web"), dp("orders-1", "orders"), dp("web-1", "web"), dp("web-3", "web")];
  const dpMeta = (name: string) => ({ type: "Dataplane", mesh: "default", name, labels: {} });
  // when asked which dataplanes it selects, with the route first and the decoys after it
  for (const decoy of [r("other", "MeshHTTPRoute", "orders"), r("default", "MeshTrafficPermission", "orders")]) {
    // then the route's dataplanes (web), by name
    t.deepEqual(dataplanesForPolicy(policy!, dataplanes, { routes: [r("default", "MeshHTTPRoute", "web"), decoy] }), { total: 3, items: [dpMeta("web-1"), dpMeta("web-2"), dpMeta("web-3")] }, decoy.type);
  }
  // and without the routes, none
  t.deepEqual(dataplanesForPolicy(policy!, dataplanes), { total: 0, items: [] });
});

// inspect KRI views › Kuma 2.12+'s per-proxy views by KRI (`_inbounds/{kri}/_policies`, `_outbounds/{kri}/_routes`, `_outbounds/{kri}/_policies`, `…/_routes/{route-kri}/_policies`) on small in-process sets.
import test from "ava";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { resourcesOf } from "../../extproc/policy/documents/resources.js";
import type { Dataplane } from "../../extproc/policy/model/dataplane.js";
import type { KumaVersion } from "../../extproc/policy/model/kuma-version.js";
import { inboundPolicies, outboundRoutes, parseKri, type Kri } from "../../extproc/policy/views/inspect-policies.js";
import { outboundPolicies, routePolicies } from "../../extproc/policy/views/inspect-outbound-policies.js";

const WEB: Dataplane = { mesh: "default", name: "web-1", proxyType: "Sidecar", labels: {}, inbounds: [{ name: "http", declaredName: "http", port: 8080, tags: { "kuma.io/service": "web" } }] };

function parsed(text: string, kumaVersion: KumaVersion = "2.14") {
  const p = parsePolicyText(text, undefined, { kumaVersion });
  if (p.rejected.length > 0) throw new Error(JSON.stringify(p.rejected));
  return { policies: p.policies, resources: resourcesOf(p.resources) };
}

function kri(text: string): Kri {
  return parseKri(text) as Kri;
}

const service = (name: string) => `type: MeshService\nname: ${name}\nlabels: {kuma.io/display-name: ${name}}\nspec: {ports: [{port: 80, name: http}]}\n---\n`;
const route = (name: string, to: string, path: string) =>
  `type: MeshHTTPRoute\nname: ${name}\nspec: {targetRef: {kind: Mesh}, to: [{targetRef: {kind: MeshService, name: ${to}}, rules: [{matches: [{path: {type: PathPrefix, value: ${path}}}], default: {}}]}]}\n---\n`;
const ROUTES = service("orders") + service("payments") + service("idle") + route("to-orders", "orders", "/o") + route("to-payments", "payments", "/p");

test("inspect KRI views › _routes of an outbound: only the routes that reach its service, and none for a service no route reaches", (t) => {
  // given routes to orders and to payments, and a service idle no route reaches
  const { policies, resources } = parsed(ROUTES);
  // when the routes towards orders' http port are asked for; then to-orders' rule and origin only
  t.deepEqual(outboundRoutes(policies, WEB, kri("kri_msvc_default___orders_http"), { resources }), {
    routes: [{ kind: "MeshHTTPRoute", origins: [{ kri: "kri_mhttpr_default___to-orders_" }], rules: [{ conf: {}, kri: "kri_mhttpr_default___to-orders_", matches: [{ path: { type: "PathPrefix", value: "/o" } }] }] }],
  });
  // and towards idle, or a service nobody knows, no routes
  t.deepEqual(outboundRoutes(policies, WEB, kri("kri_msvc_default___idle_http"), { resources }), { routes: [] });
  t.deepEqual(outboundRoutes(policies, WEB, kri("kri_msvc_default___nowhere_http"), { resources }), { routes: [] });
});

test("inspect KRI views › _policies of an outbound: its service's route rule with only that route as origin; none for a service no route reaches or nobody knows", (t) => {
  // given the same routes
  const { policies, resources } = parsed(ROUTES);
  // when orders' outbound policies are asked for; then the MeshHTTPRoute conf towards orders, from to-orders only
  t.deepEqual(outboundPolicies(policies, WEB, kri("kri_msvc_default___orders_http"), { resources }), {
    policies: [{ conf: [{ rules: [{ matches: [{ path: { type: "PathPrefix", value: "/o" } }], default: {} }] }], kind: "MeshHTTPRoute", origins: [{ kri: "kri_mhttpr_default___to-orders_" }] }],
  });
  // and idle's and an unknown service's have no MeshHTTPRoute entry
  for (const outbound of ["kri_msvc_default___idle_http", "kri_msvc_default___nowhere_http"]) t.deepEqual(outboundPolicies(policies, WEB, kri(outbound), { resources }), { policies: [] }, outbound);
});

const MESH_WIDE = `
type: MeshFaultInjection
name: faults
spec: {targetRef: {kind: Mesh}, to: [{targetRef: {kind: Mesh}, default: {http: [{abort: {httpStatus: 500, percentage: 10}}]}}]}
---
type: MeshFaultInjection
name: shadow-faults
labels: {kuma.io/effect: shadow}
spec: {targetRef: {kind: Mesh}, to: [{targetRef: {kind: Mesh}, default: {http: [{abort: {httpStatus: 503, percentage: 20}}]}}]}
---
type: MeshFaultInjection
name: gateways-only
spec: {targetRef: {kind: Mesh, proxyTypes: [Gateway]}, to: [{targetRef: {kind: Mesh}, default: {http: [{abort: {httpStatus: 502, percentage: 30}}]}}]}
---
type: MeshFaultInjection
mesh: other
name: other-mesh
spec: {targetRef: {kind: Mesh}, to: [{targetRef: {kind: Mesh}, default: {http: [{abort: {httpStatus: 504, percentage: 40}}]}}]}
---
type: MeshRateLimit
name: by-route
spec: {targetRef: {kind: MeshHTTPRoute, name: r}, to: [{targetRef: {kind: Mesh}, default: {local: {http: {requestRate: {num: 1, interval: 1s}}}}}]}
---
type: MeshHTTPRoute
name: r
spec: {targetRef: {kind: MeshService, name: web}, to: [{targetRef: {kind: MeshService, name: orders}, rules: [{matches: [{path: {type: PathPrefix, value: /a}}], default: {}}]}]}
`;

test("inspect KRI views › _routes/{route}/_policies: the Mesh-wide to confs of the policies selecting this proxy, shadowed ones left out from 2.7", (t) => {
  const kinds = (version: KumaVersion) => {
    // given Mesh-wide MeshFaultInjections (one shadow, one for gateways only, one of another mesh) and a MeshRateLimit on a route of this proxy
    const { policies } = parsed(MESH_WIDE, version);
    // when a route's policies are asked for under the version
    return routePolicies(policies, WEB, { kumaVersion: version }).policies;
  };
  const limit = { conf: [{ local: { http: { requestRate: { num: 1, interval: "1s" } } } }], kind: "MeshRateLimit", origins: [{ kri: "kri_mrl_default___by-route_" }] };
  // then under 2.14 the fault of this mesh's sidecar policy and the route's rate limit
  t.deepEqual(kinds("2.14"), [{ conf: [{ http: [{ abort: { httpStatus: 500, percentage: 10 } }] }], kind: "MeshFaultInjection", origins: [{ kri: "kri_mfi_default___faults_" }] }, limit]);
  // and under 2.6 the shadow policy takes part too
  t.deepEqual(kinds("2.6").map((p) => p.origins), [[{ kri: "kri_mfi_default___shadow-faults_" }, { kri: "kri_mfi_default___faults_" }], limit.origins]);
});

const SHADOW_MRL = `
type: MeshRateLimit
name: shadow-slow
labels: {kuma.io/effect: shadow}
spec: {targetRef: {kind: Mesh, proxyTypes: [Sidecar]}, from: [{targetRef: {kind: Mesh}, default: {local: {http: {requestRate: {num: 5, interval: 1s}}}}}]}
`;

test("inspect KRI views › _inbounds/{kri}/_policies follows the asked version: a shadow policy counts before 2.7 only", (t) => {
  // given a shadow MeshRateLimit; when the inbound's policies are asked for under 2.6 and 2.14
  const of = (version: KumaVersion) => inboundPolicies(parsed(SHADOW_MRL, version).policies, WEB, "http", { kumaVersion: version })?.policies.map((p) => p.kind);
  // then only 2.6 lists it
  t.deepEqual(of("2.6"), ["MeshRateLimit"]);
  t.deepEqual(of("2.14"), []);
});

test("inspect KRI views › _inbounds/{kri}/_policies: an inbound with neither name nor port is found by no section", (t) => {
  // given a dataplane whose only inbound has no name and no port
  const dp: Dataplane = { ...WEB, inbounds: [{ name: "inbound[0]", tags: { "kuma.io/service": "web" } }] };
  // when asked by the section "undefined" or ""; then no inbound
  for (const section of ["undefined", ""]) t.is(inboundPolicies(parsed(SHADOW_MRL).policies, dp, section), undefined, section);
});

test("inspect KRI views › parseKri joins what follows the name into the section name", (t) => {
  // given a KRI with more parts after the name; when parsed; then they make up the section name, without separators
  t.deepEqual(parseKri("kri_msvc_default_z_ns_name_a_b"), { shortName: "msvc", mesh: "default", zone: "z", namespace: "ns", name: "name", sectionName: "ab" });
});

// route order › MeshHTTPRoute matches with the same path and method are ordered by header count (more headers
// first: CompareMatch in meshhttproute/api/v1alpha1/compare.go at v2.14.3), and a RequestRedirect with only a
// `port` keeps the request's host and replaces its port (Envoy's port_redirect).
import test from "ava";
import type { Decision } from "../../extproc/decision.js";
import { yamlEngine } from "./yaml-engine.js";

const WEB = `
type: Dataplane
mesh: default
name: web-1
labels: {app: web}
networking:
  address: 10.0.0.2
  inbound:
    - {port: 8080, name: http, tags: {kuma.io/service: web}}
`;

const marker = (value: string) => `filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-route, value: ${value}}]}}]`;

/** Rules listed from the fewest headers to the most, so list order alone would pick the wrong one. */
const ROUTE = `
type: MeshHTTPRoute
mesh: default
name: orders
spec:
  targetRef: {kind: Mesh}
  to:
    - targetRef: {kind: MeshService, name: orders}
      rules:
        - matches: [{path: {type: Exact, value: /orders}, method: GET}]
          default: {${marker("none")}}
        - matches: [{path: {type: Exact, value: /orders}, method: GET, headers: [{name: x-canary, value: "1"}]}]
          default: {${marker("one")}}
        - matches: [{path: {type: Exact, value: /orders}, method: GET, headers: [{name: x-canary, value: "1"}, {name: x-tier, value: gold}]}]
          default: {${marker("two")}}
`;

const routeOf = (d: Decision) => (d.type === "continue" ? d.requestHeaders?.set.find(([k]) => k === "x-route")?.[1] : undefined);

test("route order › with the same path and method, the match with more headers is tried first", (t) => {
  // given three rules for GET /orders with 0, 1 and 2 header matches, listed in that order
  const e = yamlEngine([WEB, ROUTE].join("\n---\n"));
  const get = (headers: Record<string, string>) => e.ask({ direction: "outbound", method: "GET", path: "/orders", authority: "orders:80", headers });
  // when requests carry both headers, one, or none; then the most specific rule that fits decides
  t.is(routeOf(get({ "x-canary": "1", "x-tier": "gold" })), "two");
  t.is(routeOf(get({ "x-canary": "1" })), "one");
  t.is(routeOf(get({ "x-canary": "1", "x-tier": "silver" })), "one");
  t.is(routeOf(get({})), "none");
});

const redirect = (conf: string) => `
type: MeshHTTPRoute
mesh: default
name: moved
spec:
  targetRef: {kind: Mesh}
  to:
    - targetRef: {kind: MeshService, name: orders}
      rules:
        - matches: [{path: {type: PathPrefix, value: /old}}]
          default: {filters: [{type: RequestRedirect, requestRedirect: ${conf}}]}
`;

const location = (d: Decision) => (d.type === "respond" ? { status: d.status, location: d.headers.find(([k]) => k === "location")?.[1] } : undefined);

test("route order › a RequestRedirect with a port and no hostname keeps the host and replaces the authority's port", (t) => {
  // given a redirect to port 9443 that names no hostname
  const e = yamlEngine([WEB, redirect("{port: 9443}")].join("\n---\n"));
  const get = (authority: string) => e.ask({ direction: "outbound", method: "GET", path: "/old/a?x=1", authority, headers: { host: authority } });
  // when the request's authority carries a port; then the location has the same host with the new port
  t.deepEqual(location(get("orders:80")), { status: 302, location: "http://orders:9443/old/a?x=1" });
  // and an authority without a port gets the port added
  t.deepEqual(location(get("orders")), { status: 302, location: "http://orders:9443/old/a?x=1" });
});

test("route order › a RequestRedirect with neither port nor hostname keeps the authority as sent", (t) => {
  const e = yamlEngine([WEB, redirect("{statusCode: 301}")].join("\n---\n"));
  const d = e.ask({ direction: "outbound", method: "GET", path: "/old", authority: "orders:80" });
  t.deepEqual(location(d), { status: 301, location: "http://orders:80/old" });
});

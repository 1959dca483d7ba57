// route filters edges › applyFilters reads only the field its type names, rewrites odd paths (`*`, a bare query) as Envoy would, and routeEditDrops lists each dropped edit by rule and phase.
import test from "ava";
import { applyFilters, type FilterRequest } from "../../extproc/policy/decide/route-filters.js";
import { routeEditDrops } from "../../extproc/policy/decide/route-drops.js";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import type { Policy, RouteFilter } from "../../extproc/policy/model/types.js";

const REQ: FilterRequest = { scheme: "http", authority: "api:80", path: "/x" };

test("route filters edges › a filter's type decides: the other filters' fields it carries are ignored", (t) => {
  // given a RequestMirror filter that also carries every other filter's field
  const filter = {
    type: "RequestMirror",
    requestMirror: { backendRef: { kind: "MeshService", name: "shadow" } },
    requestHeaderModifier: { set: [{ name: "x-req", value: "1" }] },
    responseHeaderModifier: { set: [{ name: "x-res", value: "1" }] },
    urlRewrite: { hostname: "elsewhere" },
    requestRedirect: { statusCode: 301 },
  } as unknown as RouteFilter;
  // when the filters are applied; then only "not applied: RequestMirror" comes out
  t.deepEqual(applyFilters([filter], undefined, {}, REQ, false), { clearRouteCache: false, notApplied: ["RequestMirror"] });
});

const prefixRewrite = [{ type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/v2" } } }] as unknown as RouteFilter[];
const pathSet = (path: string, match = {}) => applyFilters(prefixRewrite, undefined, match, { ...REQ, path }, false).request?.set;

test("route filters edges › a prefix rewrite under a catch-all match keeps a bare query string", (t) => {
  // given the prefix / replaced by /v2; when the path is only a query; then the query follows /v2
  t.deepEqual(pathSet("?a=1"), [[":path", "/v2?a=1"]]);
});

test("route filters edges › a prefix rewrite of an asterisk-form target under an Exact match replaces it", (t) => {
  // given an Exact match (no prefix: the catch-all prefix /); when the target is `*` (OPTIONS *); then it becomes /v2
  t.deepEqual(pathSet("*", { path: { type: "Exact", value: "*" } }), [[":path", "/v2"]]);
});

const policy = (yaml: string): Policy[] => {
  const r = parsePolicyText(yaml, "drops.yaml");
  if (r.rejected.length > 0) throw new Error(JSON.stringify(r.rejected));
  return r.policies;
};
const ROUTE = `type: MeshHTTPRoute
name: edits
mesh: default
spec:
  targetRef: {kind: Mesh}
  to:
    - targetRef: {kind: MeshService, name: api}
      rules:
        - matches: [{path: {type: PathPrefix, value: /api}}]
          default:
            filters:
              - {type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /v2}}}
              - {type: RequestRedirect, requestRedirect: {statusCode: 301}}
              - {type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: x-envoy-b, value: "1,2"}]}}
`;

test("route filters edges › a response edit Envoy drops is listed once per header edit, under its rule and phase", (t) => {
  // given a route that rewrites, redirects and sets x-envoy-b to "1,2" on responses; when its drops are listed
  // then the one set (a value with a comma is one value from Kuma 2.8) is listed as a response drop
  t.deepEqual(routeEditDrops(policy(ROUTE)), [{ header: "x-envoy-b", op: "set", reason: "envoy-header", policy: "edits", rule: "to[0].rules[0]", phase: "response" }]);
});

test("route filters edges › only MeshHTTPRoutes are read, and a route or rule missing its parts lists nothing", (t) => {
  // given a gateway's MeshRateLimit (a `to` without rules), a route without `to`, and a rule with neither default nor matches
  const limit = policy(`type: MeshRateLimit
name: out-limit
mesh: default
spec:
  targetRef: {kind: Mesh, proxyTypes: [Gateway]}
  to:
    - targetRef: {kind: Mesh}
      default: {local: {http: {requestRate: {num: 1, interval: 1s}}}}
`);
  const bare = { ...policy(ROUTE)[0]!, spec: { targetRef: { kind: "Mesh" } } } as Policy;
  const partial = { ...policy(ROUTE)[0]!, spec: { targetRef: { kind: "Mesh" }, to: [{ targetRef: { kind: "MeshService", name: "api" }, rules: [{}] }] } } as unknown as Policy;
  // when their drops are listed; then there are none
  t.deepEqual(routeEditDrops([...limit, bare, partial]), []);
});

test("route filters edges › a rule without matches still has its prefix rewrite read (as under the catch-all /)", (t) => {
  // given a rule with a prefix rewrite and no matches, and an x-envoy request header set; when the drops are listed
  const rule = { default: { filters: [...prefixRewrite, { type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "x-envoy-a", value: "1" }] } }] } };
  const p = { ...policy(ROUTE)[0]!, spec: { targetRef: { kind: "Mesh" }, to: [{ targetRef: { kind: "MeshService", name: "api" }, rules: [rule] }] } } as unknown as Policy;
  // then the request drop is listed
  t.deepEqual(routeEditDrops([p]), [{ header: "x-envoy-a", op: "set", reason: "envoy-header", policy: "edits", rule: "to[0].rules[0]", phase: "request" }]);
});

// route filters › exactly what a MeshHTTPRoute rule's filters do to a request: header edits (split or literal
// values), URLRewrite's :authority and :path (query kept), RequestRedirect's status and location, and what is
// reported as not applied (a filter without its section, RequestMirror, backendRefs, hostToBackendHostname).
import test from "ava";
import { applyFilters, type FilterRequest } from "../../extproc/policy/decide/route-filters.js";
import type { RouteFilter, RouteMatch } from "../../extproc/policy/model/types.js";

const REQ: FilterRequest = { scheme: "http", authority: "api.mesh:8080", path: "/v1/items?page=2" };
const PREFIX_V1: RouteMatch = { path: { type: "PathPrefix", value: "/v1" } } as RouteMatch;
const f = (x: Record<string, unknown>) => x as unknown as RouteFilter;
const noEdits = { set: [], add: [], remove: [] };

test("route filters › no filters and no backendRefs change nothing", (t) => {
  t.deepEqual(applyFilters(undefined, undefined, PREFIX_V1, REQ, false), { clearRouteCache: false, notApplied: [] });
  t.deepEqual(applyFilters([], [], PREFIX_V1, REQ, false), { clearRouteCache: false, notApplied: [] });
});

test("route filters › header modifiers: names lower-cased, set/add/remove, two filters add up; values split on commas when asked", (t) => {
  // Given a request and a response header modifier, and a second request one
  const filters = [
    f({ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "X-A", value: "1,2" }], add: [{ name: "X-B", value: "3,4" }], remove: ["X-C"] } }),
    f({ type: "ResponseHeaderModifier", responseHeaderModifier: { set: [{ name: "Cache-Control", value: "no-store" }] } }),
    f({ type: "RequestHeaderModifier", requestHeaderModifier: { add: [{ name: "x-d", value: "5" }] } }),
  ];
  // When applied with values split (Kuma up to 2.7); then
  t.deepEqual(applyFilters(filters, [], PREFIX_V1, REQ, true), {
    request: { set: [["x-a", "1"]], add: [["x-a", "2"], ["x-b", "3"], ["x-b", "4"], ["x-d", "5"]], remove: ["x-c"] },
    response: { set: [["cache-control", "no-store"]], add: [], remove: [] },
    clearRouteCache: false,
    notApplied: [],
  });
  // and literal (2.8 on)
  t.deepEqual(applyFilters(filters, [], PREFIX_V1, REQ, false).request, { set: [["x-a", "1,2"]], add: [["x-b", "3,4"], ["x-d", "5"]], remove: ["x-c"] });
});

test("route filters › a filter without its section, or one ext_proc cannot do, is reported, as are backendRefs", (t) => {
  // Given each filter type without its section, a mirror, and backendRefs
  const filters = ["RequestHeaderModifier", "ResponseHeaderModifier", "URLRewrite", "RequestRedirect", "RequestMirror"].map((type) => f({ type }));
  // When applied; then nothing is done and each is listed, in order
  t.deepEqual(applyFilters(filters, [{ kind: "MeshService", name: "b" }], PREFIX_V1, REQ, false), {
    clearRouteCache: false,
    notApplied: ["RequestHeaderModifier", "ResponseHeaderModifier", "URLRewrite", "RequestRedirect", "RequestMirror", "backendRefs"],
  });
});

const rewritten = test.macro({
  exec(t, urlRewrite: Record<string, unknown>, match: RouteMatch, path: string, expected: { set: [string, string][]; clear: boolean; notApplied?: string[] }) {
    // Given a URLRewrite; when applied to a request for `path`; then exactly these :authority/:path edits
    const r = applyFilters([f({ type: "URLRewrite", urlRewrite })], [], match, { ...REQ, path }, false);
    t.deepEqual(r, { request: { ...noEdits, set: expected.set }, clearRouteCache: expected.clear, notApplied: expected.notApplied ?? [] });
  },
  title: (provided = "") => `route filters › rewrite ${provided}`,
});

test("the hostname sets :authority", rewritten, { hostname: "backend.internal" }, PREFIX_V1, "/v1", { set: [[":authority", "backend.internal"]], clear: true });
test("hostToBackendHostname is not applied", rewritten, { hostToBackendHostname: true }, PREFIX_V1, "/v1", { set: [], clear: false, notApplied: ["URLRewrite.hostToBackendHostname"] });
test("a full path keeps the query", rewritten, { path: { type: "ReplaceFullPath", replaceFullPath: "/new" } }, PREFIX_V1, "/v1/items?page=2", { set: [[":path", "/new?page=2"]], clear: true });
test("a full path on a bare query", rewritten, { path: { type: "ReplaceFullPath", replaceFullPath: "/new" } }, PREFIX_V1, "?page=2", { set: [[":path", "/new?page=2"]], clear: true });
test("a full path with no value does nothing", rewritten, { path: { type: "ReplaceFullPath" } }, PREFIX_V1, "/v1", { set: [], clear: false });
test("a prefix with no value does nothing", rewritten, { path: { type: "ReplacePrefixMatch" } }, PREFIX_V1, "/v1", { set: [], clear: false });
test("a path modifier of no type does nothing", rewritten, { path: { replaceFullPath: "/x", replacePrefixMatch: "/y" } }, PREFIX_V1, "/v1", { set: [], clear: false });
test("the exact prefix becomes the replacement", rewritten, { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/v2" } }, PREFIX_V1, "/v1?q=1", { set: [[":path", "/v2?q=1"]], clear: true });
test("prefix/rest becomes replacement+rest", rewritten, { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/v2" } }, PREFIX_V1, "/v1/items", { set: [[":path", "/v2items"]], clear: true });
test("prefix/rest with a trailing slash replacement", rewritten, { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/v2/" } }, PREFIX_V1, "/v1/items?x", { set: [[":path", "/v2/items?x"]], clear: true });
test("a path that only starts with the prefix's text is not rewritten", rewritten, { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/v2" } }, PREFIX_V1, "/v1x/items", { set: [], clear: false });
test("without a PathPrefix match the prefix is /", rewritten, { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/api/" } }, { path: { type: "Exact", value: "/v1/items" } } as RouteMatch, "/v1/items?p", { set: [[":path", "/api/v1/items?p"]], clear: true });
test("with no path match at all the prefix is /", rewritten, { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/api/" } }, {} as RouteMatch, "/x", { set: [[":path", "/api/x"]], clear: true });
test("hostname and path together", rewritten, { hostname: "h", path: { type: "ReplaceFullPath", replaceFullPath: "/p" } }, PREFIX_V1, "/v1", { set: [[":authority", "h"], [":path", "/p"]], clear: true });

const redirected = test.macro({
  exec(t, requestRedirect: Record<string, unknown>, req: Partial<FilterRequest>, expected: { status: number; location: string }) {
    // Given a RequestRedirect; when applied; then this status and location, and nothing else
    t.deepEqual(applyFilters([f({ type: "RequestRedirect", requestRedirect })], [], PREFIX_V1, { ...REQ, ...req }, false), { redirect: expected, clearRouteCache: false, notApplied: [] });
  },
  title: (provided = "") => `route filters › redirect ${provided}`,
});

test("with nothing set: 302 to the same URL", redirected, {}, {}, { status: 302, location: "http://api.mesh:8080/v1/items?page=2" });
test("scheme and status", redirected, { scheme: "https", statusCode: 301 }, {}, { status: 301, location: "https://api.mesh:8080/v1/items?page=2" });
test("a hostname drops the port", redirected, { hostname: "new.mesh" }, {}, { status: 302, location: "http://new.mesh/v1/items?page=2" });
test("a port replaces the authority's port", redirected, { port: 9443 }, {}, { status: 302, location: "http://api.mesh:9443/v1/items?page=2" });
test("a port on an authority without one", redirected, { port: 9443 }, { authority: "api.mesh" }, { status: 302, location: "http://api.mesh:9443/v1/items?page=2" });
test("a port on an IPv6 authority", redirected, { port: 9443 }, { authority: "[2001:db8::1]:8080" }, { status: 302, location: "http://[2001:db8::1]:9443/v1/items?page=2" });
test("a port on an IPv6 authority without one", redirected, { port: 9443 }, { authority: "[2001:db8::80]" }, { status: 302, location: "http://[2001:db8::80]:9443/v1/items?page=2" });
test("a hostname and a port", redirected, { hostname: "new.mesh", port: 8443 }, {}, { status: 302, location: "http://new.mesh:8443/v1/items?page=2" });
test("a path rewrite", redirected, { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/v2/" } }, {}, { status: 302, location: "http://api.mesh:8080/v2/items?page=2" });
test("a path rewrite that does not apply keeps the path", redirected, { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/v2/" } }, { path: "/other" }, { status: 302, location: "http://api.mesh:8080/other" });

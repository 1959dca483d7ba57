// MeshHTTPRoute plans (plans/routes.ts) called directly: merge order of repeated matches, the 2.7+ specificity
// order, how one request fits a match (headers, query, bad regexes), and the :authority's candidate service names.
import test from "ava";
import { compareMatch, destinationCandidates, findRoute, mergeRouteRules, routeTable, splitValues, type RouteEntry } from "../../extproc/policy/plans/routes.js";
import type { Policy, RouteMatch } from "../../extproc/policy/model/types.js";
import { yamlEngine } from "./yaml-engine.js";

const policy = (name: string) => ({ type: "MeshHTTPRoute", mesh: "default", name }) as Policy;

/** One `to[]` entry of `name` whose rules have these matches (one rule per element). */
function entry(name: string, ...rules: RouteMatch[][]): RouteEntry {
  return { policy: policy(name), toIndex: 0, item: { targetRef: { kind: "Mesh" }, rules: rules.map((matches) => ({ matches, default: {} })) } };
}

/** The matches of each merged rule, as text, in table order. */
function order(specificity: boolean, ...entries: RouteEntry[]): string[] {
  const table = routeTable(mergeRouteRules(entries), specificity);
  return table.order.map((c) => JSON.stringify(c.rule.matches[c.matchIndex]));
}

/** Whether a table of this one match fits the request. */
function fits(match: RouteMatch, path: string, headers: Record<string, string> = {}, method = "GET"): boolean {
  const table = routeTable(mergeRouteRules([entry("r", [match])]), true);
  return findRoute(table, { method, path, headers: new Map(Object.entries(headers)) }) !== undefined;
}

const X = { path: { type: "Exact", value: "/x" } } as const;
const Y = { path: { type: "Exact", value: "/y" } } as const;
const Z = { path: { type: "Exact", value: "/z" } } as const;

test("given a match repeated by a later route and a new match after it, when merged, then the newest-touched rule comes first", (t) => {
  const rules = mergeRouteRules([entry("a", [X]), entry("b", [X], [Y]), entry("c", [Z])]);
  t.deepEqual(rules.map((r) => r.matches[0]!.path!.value), ["/z", "/x", "/y"]);
  t.deepEqual(rules[1]!.sources.map((s) => s.policy.name), ["a", "b"]);
});

test("given matches of equal specificity, when ordered by specificity, then they keep their merged order", (t) => {
  const one = order(true, entry("r", [{ path: { type: "Exact", value: "/a" } }], [{ path: { type: "Exact", value: "/abc" } }]));
  t.deepEqual(one, [JSON.stringify({ path: { type: "Exact", value: "/a" } }), JSON.stringify({ path: { type: "Exact", value: "/abc" } })]);
  const three = order(true, entry("r", [X], [Y], [Z]));
  t.deepEqual(three, [X, Y, Z].map((m) => JSON.stringify(m)));
});

test("given two matches on one path, one with a method, when compared, then the one with the method goes first either way round", (t) => {
  const get = { ...X, method: "GET" };
  t.true(compareMatch(get, X) < 0);
  t.true(compareMatch(X, get) > 0);
  t.is(compareMatch(X, X), 0);
});

test("given two matches, one with more query parameters, when compared, then the one with more goes first either way round", (t) => {
  const one = { ...X, queryParams: [{ type: "Exact", name: "a", value: "1" }] } as RouteMatch;
  const two = { ...X, queryParams: [{ type: "Exact", name: "a", value: "1" }, { type: "Exact", name: "b", value: "2" }] } as RouteMatch;
  t.true(compareMatch(two, one) < 0);
  t.true(compareMatch(one, two) > 0);
  t.true(compareMatch(one, X) < 0);
  t.true(compareMatch(X, one) > 0);
});

test("given a match with a path and one without, when compared, then the one with the path goes first either way round", (t) => {
  const none: RouteMatch = { method: "GET" };
  t.true(compareMatch(X, none) < 0);
  t.true(compareMatch(none, X) > 0);
  t.is(compareMatch({}, {}), 0);
});

test("given two Exact paths of different lengths, when compared, then they tie (only prefixes compare by length)", (t) => {
  t.is(compareMatch({ path: { type: "Exact", value: "/a" } }, { path: { type: "Exact", value: "/abc" } }), 0);
  t.true(compareMatch({ path: { type: "PathPrefix", value: "/abc" } }, { path: { type: "PathPrefix", value: "/a" } }) < 0);
});

test("given a Prefix header match, when requests carry other, matching and any values, then only a value with the prefix fits", (t) => {
  const m: RouteMatch = { headers: [{ type: "Prefix", name: "x-v", value: "ab" }] };
  t.false(fits(m, "/", { "x-v": "xy" }));
  t.true(fits(m, "/", { "x-v": "abc" }));
  t.true(fits({ headers: [{ type: "Prefix", name: "x-v" }] }, "/", { "x-v": "anything" }));
});

test("given a RegularExpression header match without a value, when the header is empty or not, then only the empty value fits", (t) => {
  const m: RouteMatch = { headers: [{ type: "RegularExpression", name: "x-v" }] };
  t.true(fits(m, "/", { "x-v": "" }));
  t.false(fits(m, "/", { "x-v": "a" }));
});

test("given an Exact query parameter match, when the value differs or agrees, then only the same value fits", (t) => {
  const m: RouteMatch = { queryParams: [{ type: "Exact", name: "v", value: "1" }] };
  t.false(fits(m, "/p?v=2"));
  t.true(fits(m, "/p?v=1"));
});

test("given regexes that do not compile (path, header, query), when a request is routed, then none fits and nothing throws", (t) => {
  t.false(fits({ path: { type: "RegularExpression", value: "(" } }, "/("));
  t.false(fits({ headers: [{ type: "RegularExpression", name: "x-v", value: "(" }] }, "/", { "x-v": "(" }));
  t.false(fits({ queryParams: [{ type: "RegularExpression", name: "v", value: "(" }] }, "/?v=("));
});

test("given a path with no query, when a route asks for a query parameter named like the path or any text, then none fits", (t) => {
  t.false(fits({ queryParams: [{ type: "Exact", name: "/p", value: "" }] }, "/p"));
  for (const name of ["p", "Stryker was here!"]) t.false(fits({ queryParams: [{ type: "Exact", name, value: "" }] }, "/p"));
});

test("given a target that is only a query, when routed, then the path is empty and the query is read", (t) => {
  t.true(fits({ queryParams: [{ type: "Exact", name: "v", value: "1" }] }, "?v=1"));
  t.true(fits({ path: { type: "RegularExpression", value: "[^?]*" } }, "?v=1"));
});

test("given no header value, when split on commas, then one empty value", (t) => {
  t.deepEqual(splitValues(undefined), [""]);
  t.deepEqual(splitValues(" a, b "), ["a", "b"]);
});

const candidates: [string, string, string][] = [
  // [what, authority, first candidate (the host)]
  ["a bracketed IPv6 address with a port", "[fd00::1]:8080", "fd00::1"],
  ["a bracketed IPv6 address with a one-digit port", "[fd00::1]:8", "fd00::1"],
  ["a bracketed IPv6 address without a port", "[fd00::1]", "fd00::1"],
  ["brackets not at the start", "a[b]", "a[b]"],
  ["a bracketed address with junk after its port", "[fd00::1]:80x", "[fd00::1]:80x"],
  ["a port with junk after it", "web:8080x", "web:8080x"],
  ["two ports: only the last is one", "a:1.b:2", "a:1.b"],
];

for (const [what, authority, host] of candidates) {
  test(`given ${what} (${authority}), when its candidate names are taken, then the host is ${host}`, (t) => {
    t.is(destinationCandidates(authority)[0], host);
  });
}

test("given a route set, when a request goes to a bracketed IPv6 authority no route names, then the decision names the whole address", (t) => {
  const e = yamlEngine(`
type: Dataplane
mesh: default
name: web-1
networking:
  address: 10.0.0.2
  inbound: [{port: 8080, tags: {kuma.io/service: web}}]
---
type: MeshHTTPRoute
mesh: default
name: orders
spec:
  targetRef: {kind: Mesh}
  to: [{targetRef: {kind: MeshService, name: orders}, rules: [{matches: [{path: {type: PathPrefix, value: /}}], default: {}}]}]
`);
  const d = e.ask({ direction: "outbound", method: "GET", path: "/", authority: "[fd00::1]:8080" });
  t.is(d.explain?.reason, "no MeshHTTPRoute for destination fd00::1");
});

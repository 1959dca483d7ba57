// validate route › MeshHTTPRoute `to[].rules` validation: each rejected match or filter with Kuma's field path and message, and the edge inputs that pass.
import test from "ava";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";
import type { KumaVersion } from "../../extproc/policy/model/kuma-version.js";

type Pairs = [string, string][];
const R = "spec.to[0].rules[0]";
const M = `${R}.matches[0]`;
const F = `${R}.default.filters[0]`;

/** A MeshHTTPRoute with one `to` item (MeshService backend) holding `rules`. */
const route = (rules: unknown, targetRef: unknown = { kind: "Mesh" }) => ({
  type: "MeshHTTPRoute",
  mesh: "default",
  name: "r",
  spec: { targetRef, to: [{ targetRef: { kind: "MeshService", name: "backend" }, rules }] },
});
/** One rule: `matches` and a `default` (filters, backendRefs). */
const rule = (matches: unknown, def: unknown = {}) => [{ matches, default: def }];
const ANY = [{ path: { type: "PathPrefix", value: "/" } }];
const withMatch = (match: unknown) => route(rule([match]));
const withFilter = (filter: unknown, matches: unknown = ANY, targetRef?: unknown) => route(rule(matches, { filters: [filter] }), targetRef);
const rewrite = (urlRewrite: unknown, matches?: unknown, targetRef?: unknown) => withFilter({ type: "URLRewrite", urlRewrite }, matches, targetRef);
const redirect = (requestRedirect: unknown) => withFilter({ type: "RequestRedirect", requestRedirect });
const reqHeaders = (requestHeaderModifier: unknown) => withFilter({ type: "RequestHeaderModifier", requestHeaderModifier });

const verdict = test.macro({
  exec(t, doc: unknown, expected: Pairs, version: KumaVersion = "2.14") {
    // Given a MeshHTTPRoute; when validated; then exactly these violations (none: it loads)
    const r = validatePolicyObject(doc, version);
    t.deepEqual(r.violations.map((v): [string, string] => [v.field, v.message]), expected);
    t.is(r.policy === undefined, expected.length > 0);
  },
  title: (provided = "") => `validate route › ${provided}`,
});

// rules and their shape
test("given a to item without rules, when validated, then rules must have at least one element", verdict, route(undefined), [["spec.to[0].rules", "must have at least one element"]]);
test("given a rule that is not an object, when validated, then that rule must be an object", verdict, route([5]), [[R, "must be an object"]]);
test("given a rule without matches, when validated, then matches must have at least one element", verdict, route([{ default: {} }]), [[`${R}.matches`, "must have at least one element"]]);
test("given a rule without default, when validated, then default must be defined", verdict, route([{ matches: ANY }]), [[`${R}.default`, "must be defined"]]);
test("given filters that are not a list, when validated, then default.filters must be a list", verdict, route(rule(ANY, { filters: "x" })), [[`${R}.default.filters`, "must be a list"]]);
test("given a match that is not an object, when validated, then that match must be an object", verdict, route(rule([5])), [[M, "must be an object"]]);

// path matches
test("given a match path that is not an object, when validated, then match path must be an object", verdict, withMatch({ path: "/x" }), [[`${M}.path`, "must be an object"]]);
test("given a path match without type, when validated, then path.type must be defined and the value is not checked", verdict, withMatch({ path: { value: "x" } }), [
  [`${M}.path.type`, "must be defined (one of Exact, PathPrefix, RegularExpression)"],
]);
test("given a path match of an unknown type and a relative value, when validated, then only the type is rejected", verdict, withMatch({ path: { type: "Glob", value: "x" } }), [
  [`${M}.path.type`, "must be one of Exact, PathPrefix, RegularExpression"],
]);
test("given an Exact path match without value, when validated, then path.value must be defined", verdict, withMatch({ path: { type: "Exact" } }), [[`${M}.path.value`, "must be defined"]]);
test("given a relative Exact path, when validated, then path.value must be an absolute path", verdict, withMatch({ path: { type: "Exact", value: "x" } }), [[`${M}.path.value`, "must be an absolute path"]]);
test("given an Exact path with a trailing slash, when validated, then it loads", verdict, withMatch({ path: { type: "Exact", value: "/a/" } }), []);
test("given a PathPrefix with a trailing slash, when validated, then path.value does not need it", verdict, withMatch({ path: { type: "PathPrefix", value: "/a/" } }), [
  [`${M}.path.value`, "does not need a trailing slash because only a `/`-separated prefix or an entire path is matched"],
]);
test("given a RegularExpression path that does not compile, when validated, then path.value must be a valid regular expression", verdict, withMatch({ path: { type: "RegularExpression", value: "(" } }), [
  [`${M}.path.value`, "must be a valid regular expression"],
]);

// header matches
test("given headers that are not a list, when validated, then match headers must be a list", verdict, withMatch({ headers: "x" }), [[`${M}.headers`, "must be a list"]]);
test("given a header match that is not an object, when validated, then that header must be an object", verdict, withMatch({ headers: [5] }), [[`${M}.headers[0]`, "must be an object"]]);
test("given a header match of an unknown type, when validated, then headers[].type must be one of the types", verdict, withMatch({ headers: [{ type: "Suffix", name: "x", value: "v" }] }), [
  [`${M}.headers[0].type`, "must be one of Exact, Present, RegularExpression, Absent, Prefix"],
]);
test("given a header match without name, when validated, then headers[].name must be defined", verdict, withMatch({ headers: [{ value: "v" }] }), [[`${M}.headers[0].name`, "must be defined"]]);
test("given a header match whose value is a number, when validated, then headers[].value must be a string and be defined", verdict, withMatch({ headers: [{ name: "x", value: 5 }] }), [
  [`${M}.headers[0].value`, "must be a string"],
  [`${M}.headers[0].value`, "must be defined for type Exact"],
]);
test("given a RegularExpression header value that does not compile, when validated, then headers[].value must be a valid regular expression", verdict, withMatch({ headers: [{ type: "RegularExpression", name: "x", value: "(" }] }), [
  [`${M}.headers[0].value`, "must be a valid regular expression"],
]);
test("given Exact and Prefix header values that are not valid regular expressions, when validated, then they load", verdict, withMatch({ headers: [{ type: "Exact", name: "x", value: "(" }, { type: "Prefix", name: "y", value: "[" }] }), []);

// query parameter matches
test("given queryParams that are not a list, when validated, then match queryParams must be a list", verdict, withMatch({ queryParams: "x" }), [[`${M}.queryParams`, "must be a list"]]);
test("given a query match that is not an object, when validated, then that query match must be an object", verdict, withMatch({ queryParams: [5] }), [[`${M}.queryParams[0]`, "must be an object"]]);
test("given a query match without name or value, when validated, then both must be defined", verdict, withMatch({ queryParams: [{ type: "Exact" }] }), [
  [`${M}.queryParams[0].name`, "must be defined"],
  [`${M}.queryParams[0].value`, "must be defined"],
]);
test("given a RegularExpression query value that does not compile, when validated, then queryParams[].value must be a valid regular expression", verdict, withMatch({ queryParams: [{ type: "RegularExpression", name: "q", value: "(" }] }), [
  [`${M}.queryParams[0].value`, "must be a valid regular expression"],
]);
test("given a RegularExpression query value that compiles, when validated, then it loads", verdict, withMatch({ queryParams: [{ type: "RegularExpression", name: "q", value: "^a+$" }] }), []);
test("given an Exact query value that is not a valid regular expression, when validated, then it loads", verdict, withMatch({ queryParams: [{ type: "Exact", name: "q", value: "(" }] }), []);
test("given a RegularExpression query match without value, when validated, then only the value must be defined", verdict, withMatch({ queryParams: [{ type: "RegularExpression", name: "q" }] }), [
  [`${M}.queryParams[0].value`, "must be defined"],
]);

// filters
test("given a filter that is not an object, when validated, then that filter must be an object", verdict, route(rule(ANY, { filters: [5] })), [[F, "must be an object"]]);
test("given a filter type without its section, when validated, then the section must be defined", verdict, withFilter({ type: "RequestHeaderModifier" }), [[`${F}.requestHeaderModifier`, "must be defined"]]);

// header modifiers
test("given a header modifier with only remove, when validated, then it loads", verdict, reqHeaders({ remove: ["x-a"] }), []);
test("given a header modifier with nothing in it, when validated, then it must have one of set, add, remove", verdict, reqHeaders({}), [[`${F}.requestHeaderModifier`, "must have at least one defined: set, add, remove"]]);
test("given a set entry without name, when validated, then its name must be defined", verdict, reqHeaders({ set: [{ value: "v" }] }), [[`${F}.requestHeaderModifier.set[0].name`, "must be defined"]]);
test("given one name set twice in other cases, when validated, then the second set entry is a duplicate", verdict, reqHeaders({ set: [{ name: "x-a", value: "1" }, { name: "X-A", value: "2" }] }), [
  [`${F}.requestHeaderModifier.set[1]`, "duplicate header name X-A across set, add and remove"],
]);
test("given one name set and added, when validated, then the add entry is a duplicate", verdict, reqHeaders({ set: [{ name: "x-a", value: "1" }], add: [{ name: "X-A", value: "2" }] }), [
  [`${F}.requestHeaderModifier.add[0]`, "duplicate header name X-A across set, add and remove"],
]);
test("given one name added and removed, when validated, then the remove entry is a duplicate", verdict, reqHeaders({ add: [{ name: "x-a", value: "1" }], remove: ["X-a"] }), [
  [`${F}.requestHeaderModifier.remove[0]`, "duplicate header name X-a across set, add and remove"],
]);
test("given names equal only once upper-cased (ss and ß), when validated, then they are not duplicates", verdict, reqHeaders({ set: [{ name: "ss", value: "1" }], remove: ["ß"] }), []);
test("given remove that is not a list, when validated, then remove must be a list", verdict, reqHeaders({ remove: "x" }), [[`${F}.requestHeaderModifier.remove`, "must be a list"]]);
test("given a remove entry that is not a string, when validated, then that entry must be a string", verdict, reqHeaders({ remove: [5] }), [[`${F}.requestHeaderModifier.remove[0]`, "must be a string"]]);
const names = (n: number) => Array.from({ length: n }, (_, i) => `x-${i}`);
test("given 16 headers to remove, when validated, then it loads", verdict, reqHeaders({ remove: names(16) }), []);
test("given 17 headers to remove, when validated, then remove must have at most 16 elements", verdict, reqHeaders({ remove: names(17) }), [[`${F}.requestHeaderModifier.remove`, "must have at most 16 elements"]]);

// URLRewrite and RequestRedirect
const U = `${F}.urlRewrite`;
const D = `${F}.requestRedirect`;
test("given a rewrite hostname that is a number, when validated, then hostname must be a string", verdict, rewrite({ hostname: 5 }), [[`${U}.hostname`, "must be a string"]]);
test("given a rewrite hostname ending in a digit, when validated, then it loads", verdict, rewrite({ hostname: "svc.v1" }), []);
test("given a rewrite hostname starting with a digit, when validated, then it loads", verdict, rewrite({ hostname: "1.example.com" }), []);
test("given a rewrite hostname that is an IPv4 address, when validated, then it cannot be an IP address", verdict, rewrite({ hostname: "10.0.0.1" }), [[`${U}.hostname`, "cannot be an IP address"]]);
const label63 = "a".repeat(63);
test("given a rewrite hostname of 253 characters, when validated, then it loads", verdict, rewrite({ hostname: [label63, label63, label63, "a".repeat(61)].join(".") }), []);
test("given a rewrite hostname of 254 characters, when validated, then it must be an RFC 1123 subdomain", verdict, rewrite({ hostname: [label63, label63, label63, "a".repeat(62)].join(".") }), [
  [`${U}.hostname`, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"],
]);
test("given a rewrite path that is not an object, when validated, then path must be an object", verdict, rewrite({ path: "/x" }), [[`${U}.path`, "must be an object"]]);
test("given a rewrite path without type, when validated, then path.type must be defined", verdict, rewrite({ path: {} }), [[`${U}.path.type`, "must be defined (one of ReplaceFullPath, ReplacePrefixMatch)"]]);
test("given ReplaceFullPath without its value, when validated, then replaceFullPath must be defined", verdict, rewrite({ path: { type: "ReplaceFullPath" } }), [[`${U}.path.replaceFullPath`, "must be defined"]]);
test("given ReplacePrefixMatch without its value, when validated, then replacePrefixMatch must be defined", verdict, rewrite({ path: { type: "ReplacePrefixMatch" } }), [[`${U}.path.replacePrefixMatch`, "must be defined"]]);
test("given ReplaceFullPath with a newline, when validated, then replaceFullPath must not hold control characters", verdict, rewrite({ path: { type: "ReplaceFullPath", replaceFullPath: "/a\nb" } }), [
  [`${U}.path.replaceFullPath`, "must not contain CR, LF or NUL (Envoy fails every request the edit applies to with 500, and drops every header of a local reply)"],
]);
const MIXED = [{ path: { type: "PathPrefix", value: "/a" } }, { path: { type: "Exact", value: "/b" } }];
test("given replacePrefixMatch with one prefix and one exact match, when validated, then it can only appear with all-prefix matches", verdict, rewrite({ path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/c" } }, MIXED), [
  [`${U}.path.replacePrefixMatch`, "can only appear if all matches match a path prefix"],
]);
test("given replacePrefixMatch in a rule without matches, when validated, then only the matches are missing", verdict, route([{ default: { filters: [{ type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/c" } } }] } }]), [
  [`${R}.matches`, "must have at least one element"],
]);
test("given hostToBackendHostname under a MeshGateway route, when validated, then it loads with a not-applied warning", (t) => {
  // Given a MeshGateway-scoped route (Mesh backends) rewriting to the backend hostname; when validated
  const doc = { type: "MeshHTTPRoute", mesh: "default", name: "r", spec: { targetRef: { kind: "MeshGateway", name: "gw" }, to: [{ targetRef: { kind: "Mesh" }, rules: rule(ANY, { filters: [{ type: "URLRewrite", urlRewrite: { hostToBackendHostname: true } }] }) }] } };
  const r = validatePolicyObject(doc, "2.14");
  // then no violation and only the warning that meshext does not apply it
  t.deepEqual(r.violations, []);
  t.deepEqual(r.warnings, [{ field: `${U}.hostToBackendHostname`, message: "not applied by meshext: the backend hostname is only known once Envoy picked the upstream" }]);
});
test("given hostToBackendHostname with a hostname outside a MeshGateway, when validated, then both rejections", verdict, rewrite({ hostToBackendHostname: true, hostname: "h" }), [
  [`${U}.hostToBackendHostname`, "can only be set with MeshGateway"],
  [`${U}.hostToBackendHostname`, "cannot be set together with hostname"],
]);
test("given a redirect scheme other than http(s), when validated, then scheme must be one of them", verdict, redirect({ scheme: "ftp" }), [[`${D}.scheme`, "must be one of http, https"]]);
test("given a redirect port of 0, when validated, then port must be in range", verdict, redirect({ port: 0 }), [[`${D}.port`, "must be in inclusive range [1, 65535]"]]);
test("given a redirect status 200, when validated, then statusCode must be in the 3xx range and a redirect code", verdict, redirect({ statusCode: 200 }), [
  [`${D}.statusCode`, "must be in inclusive range [300, 399]"],
  [`${D}.statusCode`, "must be one of 301, 302, 303, 307, 308"],
]);
test("given redirect status 301, 302, 303, 307 and 308, when validated, then each loads", (t) => {
  for (const statusCode of [301, 302, 303, 307, 308]) t.deepEqual(validatePolicyObject(redirect({ statusCode }), "2.14").violations, [], String(statusCode));
});
test("given redirect status 304, when validated, then statusCode must be a redirect code", verdict, redirect({ statusCode: 304 }), [[`${D}.statusCode`, "must be one of 301, 302, 303, 307, 308"]]);

// backendRefs
const B = `${R}.default.backendRefs`;
const backends = (backendRefs: unknown) => route(rule(ANY, { backendRefs }));
test("given an empty backendRefs list, when validated, then it loads without a warning", (t) => {
  const r = validatePolicyObject(backends([]), "2.14");
  t.deepEqual([r.violations, r.warnings], [[], []]);
});
test("given a backendRef that is not an object, when validated, then it must be an object", verdict, backends([5]), [[`${B}[0]`, "must be an object"]]);
test("given a backendRef port of 0, when validated, then port must be in range", verdict, backends([{ kind: "MeshService", name: "b", port: 0 }]), [[`${B}[0].port`, "must be in inclusive range [1, 65535]"]]);
test("given a negative backendRef weight, when validated, then weight must be at least 0", verdict, backends([{ kind: "MeshService", name: "b", weight: -1 }]), [[`${B}[0].weight`, "must be at least 0"]]);

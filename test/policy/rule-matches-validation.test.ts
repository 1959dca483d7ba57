// rule matches validation › `spec.rules[].matches` (MeshFaultInjection, MeshRateLimit) and MeshTrafficPermission's
// allow/deny lists at Kuma 2.14: every spiffeID and sni problem with Kuma's path and message (go-spiffe's SPIFFE ID
// rules, RFC 1123 for SNI), and the warnings that do not reject.
import test from "ava";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";
import { spiffeIdProblem } from "../../extproc/policy/documents/validate-rules.js";

type Pairs = [string, string][];
const mfi = (matches: unknown) => ({
  type: "MeshFaultInjection",
  mesh: "default",
  name: "f",
  spec: { targetRef: { kind: "Mesh" }, rules: [{ matches, default: { http: [{ abort: { httpStatus: 500, percentage: 50 } }] } }] },
});
const mtp = (def: unknown, extra: Record<string, unknown> = {}) => ({ type: "MeshTrafficPermission", mesh: "default", name: "p", spec: { targetRef: { kind: "Mesh" }, rules: [{ default: def, ...extra }] } });
const pairs = (vs: { field: string; message: string }[]): Pairs => vs.map((v) => [v.field, v.message]);

const spiffe = test.macro({
  exec(t, id: string, problem: string | undefined) {
    // Given a SPIFFE ID; when checked; then this problem (undefined: it is one)
    t.is(spiffeIdProblem(id), problem);
  },
  title: (provided = "", id: string) => `rule matches validation › spiffe ID ${JSON.stringify(id)} ${provided}`,
});

test("is valid", spiffe, "spiffe://default/ns/web/sa/api", undefined);
test("is valid (a trust domain alone)", spiffe, "spiffe://default.mesh-1_a", undefined);
test("is valid (path characters)", spiffe, "spiffe://td/A-z_0.9", undefined);
test("is empty", spiffe, "", "cannot be empty");
test("has no scheme", spiffe, "default/web", "scheme is missing or invalid");
test("has another scheme", spiffe, "spiffes://default/web", "scheme is missing or invalid");
test("has no trust domain", spiffe, "spiffe:///web", "trust domain is missing");
test("has no trust domain or path", spiffe, "spiffe://", "trust domain is missing");
test("has an upper-case trust domain", spiffe, "spiffe://Default/web", "trust domain characters are limited to lowercase letters, numbers, dots, dashes, and underscores");
test("has a trust domain with a colon", spiffe, "spiffe://default:80/web", "trust domain characters are limited to lowercase letters, numbers, dots, dashes, and underscores");
test("has a trailing slash", spiffe, "spiffe://default/web/", "path cannot have a trailing slash");
test("is a trust domain and a slash", spiffe, "spiffe://default/", "path cannot have a trailing slash");
test("has an empty segment", spiffe, "spiffe://default//web", "path cannot contain empty segments");
test("has a dot segment", spiffe, "spiffe://default/./web", "path cannot contain dot segments");
test("has a dot-dot segment", spiffe, "spiffe://default/a/..", "path cannot contain dot segments");
test("has a segment of other characters", spiffe, "spiffe://default/a b", "path segment characters are limited to letters, numbers, dots, dashes, and underscores");

const rejects = test.macro({
  exec(t, doc: unknown, expected: Pairs) {
    // Given a 2.14 policy; when validated; then no policy and exactly these violations
    const r = validatePolicyObject(doc, "2.14");
    t.is(r.policy, undefined);
    t.deepEqual(pairs(r.violations), expected);
  },
  title: (provided = "") => `rule matches validation › rejects ${provided}`,
});

test("a spiffeID without type or with a bad value", rejects, mfi([{ spiffeID: { value: "web" } }]), [
  ["spec.rules[0].matches[0].spiffeID.type", "must be set"],
  ["spec.rules[0].matches[0].spiffeID", "must be a valid Spiffe ID: scheme is missing or invalid"],
]);
test("a spiffeID of an unknown type, value not a string", rejects, mfi([{ spiffeID: { type: "Regex", value: 1 } }]), [
  ['spec.rules[0].matches[0].spiffeID.type', 'unrecognized type "Regex", supported values are: Exact, Prefix'],
  ["spec.rules[0].matches[0].spiffeID", "must be a valid Spiffe ID: value must be a string"],
]);
test("a spiffeID with an empty type", rejects, mfi([{ spiffeID: { type: "", value: "spiffe://default/web" } }]), [["spec.rules[0].matches[0].spiffeID.type", "must be set"]]);
test("a spiffeID that is not an object", rejects, mfi([{ spiffeID: "spiffe://default/web" }]), [["spec.rules[0].matches[0].spiffeID", "must be an object"]]);
test("an sni without type or value", rejects, mfi([{ sni: {} }]), [
  ["spec.rules[0].matches[0].sni.type", "must be set"],
  ["spec.rules[0].matches[0].sni.value", "must be set"],
]);
test("an sni of another type and an empty value", rejects, mfi([{ sni: { type: "Prefix", value: "" } }]), [
  ['spec.rules[0].matches[0].sni.type', 'unrecognized type "Prefix", supported values are: Exact'],
  ["spec.rules[0].matches[0].sni.value", "must be set"],
]);
test("an sni that is not a DNS name", rejects, mfi([{ sni: { type: "Exact", value: "Web.Mesh" } }]), [
  ["spec.rules[0].matches[0].sni.value", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"],
]);
test("an sni longer than 253", rejects, mfi([{ sni: { type: "Exact", value: `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}` } }]), [
  ["spec.rules[0].matches[0].sni.value", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"],
]);
test("an sni that is not an object", rejects, mfi([{ sni: "web.mesh" }]), [["spec.rules[0].matches[0].sni", "must be an object"]]);
test("a match that is not an object, then a good one", rejects, mfi(["x", { spiffeID: { type: "Exact", value: "spiffe://default/web" } }]), [["spec.rules[0].matches[0]", "must be an object"]]);
test("MTP list entries are checked at the rule's path", rejects, mtp({ allow: [{ spiffeID: { type: "Exact", value: "spiffe://Default/web" } }], deny: [{ sni: { type: "Exact", value: "-x" } }] }), [
  ["spec.rules[0].allow[0].spiffeID", "must be a valid Spiffe ID: trust domain characters are limited to lowercase letters, numbers, dots, dashes, and underscores"],
  ["spec.rules[0].deny[0].sni.value", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"],
]);
test("an MTP rule with no list", rejects, mtp({}), [["spec.rules[0]", "at least one of 'allow', 'allowWithShadowDeny', 'deny' has to be defined"]]);
test("an MTP rule whose lists are empty", rejects, mtp({ allow: [], deny: [] }), [["spec.rules[0]", "at least one of 'allow', 'allowWithShadowDeny', 'deny' has to be defined"]]);

test("rule matches validation › an MFI match with neither spiffeID nor sni loads with a warning; an MRL one is rejected", (t) => {
  // Given a MeshFaultInjection rule match that names no client; when validated; then it loads, with a warning
  const f = validatePolicyObject(mfi([{}]), "2.14");
  t.truthy(f.policy);
  t.deepEqual(pairs(f.warnings), [["spec.rules[0].matches[0]", "matches no client: neither 'spiffeID' nor 'sni' is set"]]);
  // and the same match in a MeshRateLimit is a violation
  const mrl = {
    type: "MeshRateLimit",
    mesh: "default",
    name: "r",
    spec: { targetRef: { kind: "Mesh", proxyTypes: ["Sidecar"] }, rules: [{ matches: [{}], default: { local: { http: { requestRate: { num: 1, interval: "1s" } } } } }] },
  };
  t.deepEqual(pairs(validatePolicyObject(mrl, "2.14").violations), [["spec.rules[0].matches[0]", "must specify at least one of 'spiffeID' or 'sni'"]]);
});

test("rule matches validation › MTP rule matches load with a warning that they are ignored", (t) => {
  // Given an MTP rule with `matches` beside its lists; when validated; then it loads and the matches are warned about
  const r = validatePolicyObject(mtp({ allow: [{ spiffeID: { type: "Prefix", value: "spiffe://default" } }] }, { matches: [{}] }), "2.14");
  t.truthy(r.policy, JSON.stringify(r.violations));
  t.deepEqual(pairs(r.warnings).filter(([f]) => f.endsWith("matches")), [["spec.rules[0].matches", "ignored: MeshTrafficPermission rules match with their allow and deny lists"]]);
});

test("rule matches validation › before 2.14 an sni match is not defined, and before matches existed none is", (t) => {
  // Given the same MFI rule read as 2.13 and as 2.6; when validated; then
  t.deepEqual(pairs(validatePolicyObject(mfi([{ sni: { type: "Exact", value: "web.mesh" } }]), "2.13").violations), [["spec.rules[0].matches[0].sni", "must not be defined (sni matches are new in Kuma 2.14)"]]);
  const old = pairs(validatePolicyObject(mfi([{ spiffeID: { type: "Exact", value: "spiffe://default/web" } }]), "2.6").violations);
  t.true(old.length > 0, JSON.stringify(old));
});

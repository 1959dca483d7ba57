// validate rules › the shape of `spec.rules[]` in MeshTrafficPermission, MeshFaultInjection and MeshRateLimit at Kuma
// 2.13–2.14: a rule, its default and its matches that are not objects or lists, `to`/`from` beside MRL rules, which
// matches count as a SPIFFE match (the MRL `local.tcp` rule), SNI names at the edges of RFC 1123, SPIFFE IDs.
import test from "ava";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";
import { spiffeIdProblem } from "../../extproc/policy/documents/validate-rules.js";
import type { KumaVersion } from "../../extproc/policy/model/types.js";

type Pairs = [string, string][];
const pairs = (vs: { field: string; message: string }[]): Pairs => vs.map((v) => [v.field, v.message]);
const violations = (doc: unknown, version: KumaVersion = "2.14"): Pairs => pairs(validatePolicyObject(doc, version).violations);

const mtp = (rules: unknown[]) => ({ type: "MeshTrafficPermission", mesh: "default", name: "p", spec: { targetRef: { kind: "Mesh" }, rules } });
const mfi = (rules: unknown[]) => ({ type: "MeshFaultInjection", mesh: "default", name: "f", spec: { targetRef: { kind: "Mesh" }, rules } });
const mrl = (rules: unknown[], extra: Record<string, unknown> = {}) => ({
  type: "MeshRateLimit",
  mesh: "default",
  name: "r",
  spec: { targetRef: { kind: "Mesh", proxyTypes: ["Sidecar"] }, rules, ...extra },
});
const abort = { http: [{ abort: { httpStatus: 500, percentage: 50 } }] };
const httpLimit = { local: { http: { requestRate: { num: 5, interval: "1s" } } } };
const tcpLimit = { local: { tcp: { connectionRate: { num: 5, interval: "1s" } } } };
const TCP_WITH_SPIFFE = "can't be specified when matches contain spiffeID because this field cannot be conditioned on source identity";
const RFC1123 =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

test("validate rules › given rules that are not objects, when validated, then each kind names the rule and goes on to the next", (t) => {
  t.deepEqual(violations(mtp(["x", { default: { allow: [{ spiffeID: { type: "Prefix", value: "spiffe://default" } }] } }])), [["spec.rules[0]", "must be an object"]]);
  t.deepEqual(violations(mfi([7, { default: abort }])), [["spec.rules[0]", "must be an object"]]);
  t.deepEqual(violations(mrl(["x", { default: httpLimit }])), [["spec.rules[0]", "must be an object"]]);
});

test("validate rules › given a rule without a default, when validated, then `spec.rules[i].default` must be defined, and nothing more", (t) => {
  t.deepEqual(violations(mtp([{}])), [["spec.rules[0].default", "must be defined"]]);
  t.deepEqual(violations(mfi([{}])), [["spec.rules[0].default", "must be defined"]]);
  t.deepEqual(violations(mrl([{}])), [["spec.rules[0].default", "must be defined"]]);
});

test("validate rules › given an MTP default whose allow is not a list, when validated, then the list's path under default, and no list counts", (t) => {
  t.deepEqual(violations(mtp([{ default: { allow: "spiffe://default" } }])), [
    ["spec.rules[0].default.allow", "must be a list"],
    ["spec.rules[0]", "at least one of 'allow', 'allowWithShadowDeny', 'deny' has to be defined"],
  ]);
});

test("validate rules › given an MTP list entry naming no client, when validated, then it loads with a warning at the rule's path (not a violation as in MRL)", (t) => {
  const r = validatePolicyObject(mtp([{ default: { deny: [{}] } }]), "2.14");
  t.truthy(r.policy, JSON.stringify(r.violations));
  t.deepEqual(pairs(r.warnings), [["spec.rules[0].deny[0]", "matches no client: neither 'spiffeID' nor 'sni' is set"]]);
});

test("validate rules › given MRL rules beside a non-empty `to`, when validated, then `to` and `from` must be empty; an empty `from` is fine", (t) => {
  const to = [{ targetRef: { kind: "Mesh" }, default: httpLimit }];
  t.deepEqual(violations(mrl([{ default: httpLimit }], { to })), [
    ["spec.to", "must not be defined when the scope does not include a Gateway"],
    ["spec", "fields 'to' and 'from' must be empty when 'rules' is defined"],
  ]);
  t.deepEqual(violations(mrl([{ default: httpLimit }], { from: [] })), []);
  t.deepEqual(violations(mrl([{ default: httpLimit }], { to: [] })), []);
});

test("validate rules › given matches in a version that has none for the kind, when validated, then `matches` must not be defined, naming the version", (t) => {
  // MeshRateLimit has rules since 2.10 and matches since 2.14
  const doc = mrl([{ matches: [{ spiffeID: { type: "Exact", value: "spiffe://default/web" } }], default: httpLimit }]);
  t.deepEqual(violations(doc, "2.13"), [["spec.rules[0].matches", "must not be defined (Kuma 2.13 has no matches here)"]]);
  t.deepEqual(violations(doc, "2.14"), []);
});

test("validate rules › given matches that are not a list, when validated, then `matches` must be a list", (t) => {
  t.deepEqual(violations(mfi([{ matches: { spiffeID: { type: "Exact", value: "spiffe://default/web" } }, default: abort }])), [["spec.rules[0].matches", "must be a list"]]);
  t.deepEqual(violations(mrl([{ matches: "web", default: httpLimit }])), [["spec.rules[0].matches", "must be a list"]]);
});

test("validate rules › given an MRL rule limiting TCP, when only its SPIFFE matches count, then sni-only, malformed and empty matches do not forbid local.tcp", (t) => {
  // Given local.tcp and a spiffeID match; then rejected
  t.deepEqual(violations(mrl([{ matches: [{ spiffeID: { type: "Prefix", value: "spiffe://default" } }], default: tcpLimit }])), [["spec.rules[0].default.local.tcp", TCP_WITH_SPIFFE]]);
  // Given local.tcp and only an sni match; then it loads
  t.deepEqual(violations(mrl([{ matches: [{ sni: { type: "Exact", value: "backend.mesh" } }], default: tcpLimit }])), []);
  // Given local.tcp and a match that is not an object, or names nothing; then only that match is wrong
  t.deepEqual(violations(mrl([{ matches: ["x"], default: tcpLimit }])), [["spec.rules[0].matches[0]", "must be an object"]]);
  t.deepEqual(violations(mrl([{ matches: [{}], default: tcpLimit }])), [["spec.rules[0].matches[0]", "must specify at least one of 'spiffeID' or 'sni'"]]);
});

test("validate rules › given an sni whose type is empty, when validated, then its type must be set", (t) => {
  t.deepEqual(violations(mfi([{ matches: [{ sni: { type: "", value: "backend.mesh" } }], default: abort }])), [["spec.rules[0].matches[0].sni.type", "must be set"]]);
});

test("validate rules › given SNI names at the edges of RFC 1123, when validated, then one-letter and long labels and exactly 253 characters load; a label ending in '-' does not", (t) => {
  const sni = (value: string) => violations(mfi([{ matches: [{ sni: { type: "Exact", value } }], default: abort }]));
  t.deepEqual(sni("a.b"), []);
  t.deepEqual(sni("backend.mesh.svc-1.cluster"), []);
  t.deepEqual(sni(`${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`), []);
  t.deepEqual(sni("backend.mesh-"), [["spec.rules[0].matches[0].sni.value", RFC1123]]);
  t.deepEqual(sni("backend.-mesh"), [["spec.rules[0].matches[0].sni.value", RFC1123]]);
});

test("validate rules › given a SPIFFE ID whose trust domain is one letter, when checked, then its path is read after the trust domain", (t) => {
  t.is(spiffeIdProblem("spiffe://a/b"), undefined);
  t.is(spiffeIdProblem("spiffe://a/b/"), "path cannot have a trailing slash");
});

test("validate rules › given MeshFaultInjection with rules, when it also has from items, then 'from' must be empty; an empty from is fine", (t) => {
  const withFrom = (from: unknown[]) => ({ ...mfi([{ default: abort }]), spec: { targetRef: { kind: "Mesh", proxyTypes: ["Sidecar"] }, rules: [{ default: abort }], from } });
  const cases: Array<[string, unknown[], Pairs]> = [
    ["one from item beside rules", [{ targetRef: { kind: "Mesh" }, default: abort }], [["spec", "field 'from' must be empty when 'rules' is defined"]]],
    ["an empty from beside rules", [], []],
  ];
  for (const [name, from, expected] of cases) t.deepEqual(violations(withFrom(from), "2.14"), expected, name);
  t.deepEqual(violations(mfi([{ default: abort }]), "2.14"), [], "rules alone");
});

test("validate rules › given matches in a version that has none for the kind, when the rule limits TCP, then only `matches` is refused (they count as no SPIFFE match)", (t) => {
  // Given MRL at 2.13 (no matches yet) with a spiffeID match and local.tcp; when validated; then the matches alone
  const doc = mrl([{ matches: [{ spiffeID: { type: "Exact", value: "spiffe://default/web" } }], default: tcpLimit }]);
  t.deepEqual(violations(doc, "2.13"), [["spec.rules[0].matches", "must not be defined (Kuma 2.13 has no matches here)"]]);
});

test("validate rules › given a SPIFFE ID without a path, when checked, then the whole rest is its trust domain", (t) => {
  // Given IDs with no slash after the trust domain; when checked; then every character of the trust domain counts
  t.is(spiffeIdProblem("spiffe://a"), undefined);
  t.is(spiffeIdProblem("spiffe://example.orG"), "trust domain characters are limited to lowercase letters, numbers, dots, dashes, and underscores");
});

// validate spec › what validate.ts checks for every kind: a missing spec, which policies count as inbound, the top-level kinds a role may name, and the deprecation warnings of top-level kinds.
import test from "ava";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";
import { validateSpec } from "../../extproc/policy/documents/validate.js";
import { versionTraits, type KumaVersion } from "../../extproc/policy/model/kuma-version.js";

type Pairs = [string, string][];
const pairs = (vs: { field: string; message: string }[]): Pairs => vs.map((v) => [v.field, v.message]);
const CONSUMER = { "kuma.io/policy-role": "consumer" };
const LIMIT = { local: { http: { disabled: true } } };
const ANY_RULES = [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], default: {} }];
const mrlTo = (top: unknown, labels: Record<string, string> = {}) => ({ type: "MeshRateLimit", mesh: "default", name: "m", labels, spec: { targetRef: top, to: [{ targetRef: { kind: "Mesh" }, default: LIMIT }] } });
const route = (top: unknown, to: unknown, labels: Record<string, string> = {}) => ({ type: "MeshHTTPRoute", mesh: "default", name: "r", labels, spec: { targetRef: top, to: [{ targetRef: to, rules: ANY_RULES }] } });
const check = (doc: unknown, version: KumaVersion) => {
  const r = validatePolicyObject(doc, version);
  return { violations: pairs(r.violations), warnings: pairs(r.warnings), loads: r.policy !== undefined };
};

test("validate spec › given no spec, when validated, then the one violation at `spec`, no warnings, no implicit targetRef", (t) => {
  // Given a spec that is absent or no object; when validated directly; then exactly this result
  const ctx = { traits: versionTraits("2.14"), role: "system" as const };
  t.deepEqual(validateSpec("MeshTrafficPermission", undefined, ctx), { violations: [{ field: "spec", message: "must be defined" }], warnings: [], implicitTargetRef: false });
  t.deepEqual(validateSpec("MeshRateLimit", "x", ctx), { violations: [{ field: "spec", message: "must be an object" }], warnings: [], implicitTargetRef: false });
  // and a whole policy without spec does not load
  t.deepEqual(check({ type: "MeshTrafficPermission", mesh: "default", name: "p" }, "2.14"), { violations: [["spec", "must be defined"]], warnings: [], loads: false });
});

test("validate spec › given an empty `from` and no rules, when a top-level Dataplane names a section, then the policy is not inbound", (t) => {
  // Given MeshFaultInjection at 2.10 (no rules yet) with `from: []`; when validated; then sectionName is for inbound policies
  const doc = { type: "MeshFaultInjection", mesh: "default", name: "f", spec: { targetRef: { kind: "Dataplane", sectionName: "http" }, from: [] } };
  t.deepEqual(check(doc, "2.10").violations, [["spec.targetRef.sectionName", "can only be used with inbound policies"]]);
});

test("validate spec › given a non-system role before 2.8, when the top-level ref is a MeshGateway or MeshHTTPRoute, then it loads (no role order yet)", (t) => {
  t.true(check(route({ kind: "MeshGateway", name: "gw" }, { kind: "Mesh" }, CONSUMER), "2.7").loads);
  t.true(check(mrlTo({ kind: "MeshHTTPRoute", name: "r" }, CONSUMER), "2.7").loads);
});

test("validate spec › given a consumer policy from 2.8, when the top-level ref is a MeshHTTPRoute, then the kind is refused; a system one loads", (t) => {
  // Given MeshRateLimit at 2.14 with a consumer role and a top-level MeshHTTPRoute; when validated; then the kind is not offered
  t.deepEqual(check(mrlTo({ kind: "MeshHTTPRoute", name: "r" }, CONSUMER), "2.14").violations, [["spec.targetRef.kind", "must be one of Mesh, MeshSubset, MeshService, MeshServiceSubset, Dataplane"]]);
  t.true(check(mrlTo({ kind: "MeshHTTPRoute", name: "r" }), "2.14").loads);
});

test("validate spec › given a deprecated top-level kind, when validated, then the warning names what replaces it in that version", (t) => {
  // Given a top-level MeshHTTPRoute at 2.13; then use MeshHTTPRoute in spec.to[]
  t.deepEqual(check(mrlTo({ kind: "MeshHTTPRoute", name: "r" }), "2.13"), {
    violations: [],
    warnings: [["spec.targetRef.kind", "MeshHTTPRoute value for 'targetRef.kind' is deprecated, use MeshHTTPRoute in spec.to[].targetRef"]],
    loads: true,
  });
  // Given a top-level MeshService at 2.9 (no Dataplane kind yet); then use MeshSubset
  const toBackend = { kind: "MeshService", name: "backend" };
  t.deepEqual(check(route({ kind: "MeshService", name: "web" }, toBackend), "2.9").warnings, [["spec.targetRef.kind", "MeshService value for 'targetRef.kind' is deprecated, use MeshSubset instead"]]);
  // and from 2.10 (Dataplane kind); then use Dataplane with labels
  t.deepEqual(check(route({ kind: "MeshService", name: "web" }, toBackend), "2.10").warnings, [["spec.targetRef.kind", "MeshService value for 'targetRef.kind' is deprecated, use Dataplane with labels instead"]]);
});

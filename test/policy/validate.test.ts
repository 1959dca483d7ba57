// validate › small table of policy documents and the violations they must (or must not) produce (Kuma 2.6 validators).
import test from "ava";
import { parsePolicyText, validatePolicyObject } from "../../extproc/policy/documents/parse.js";

const mtp = (from: unknown, targetRef: unknown = { kind: "Mesh" }) => ({ type: "MeshTrafficPermission", mesh: "default", name: "p", spec: { targetRef, from } });

const rejects = test.macro({
  exec(t, doc: unknown, field: string, message: RegExp) {
    // given a document; when validated; then a violation names the field with the message
    const { policy, violations } = validatePolicyObject(doc, "2.6");
    t.is(policy, undefined);
    t.true(violations.some((v) => v.field === field && message.test(v.message)), JSON.stringify(violations));
  },
  title: (provided = "") => `validate › rejects ${provided}`,
});

test("action spelled ALLOW", rejects, mtp([{ targetRef: { kind: "Mesh" }, default: { action: "ALLOW" } }]), "spec.from[0].default.action", /^must be one of Allow, Deny, AllowWithShadowDeny$/);
test("MTP without from", rejects, mtp(undefined), "spec.from", /at least one/);
test("MeshService without name", rejects, mtp([], { kind: "MeshService" }), "spec.targetRef.name", /must be defined/);
test("tags on Mesh", rejects, mtp([], { kind: "Mesh", tags: { a: "b" } }), "spec.targetRef.tags", /must not be set/);
test("MeshGateway in MTP from", rejects, mtp([{ targetRef: { kind: "MeshGateway", name: "g" }, default: { action: "Deny" } }]), "spec.from[0].targetRef.kind", /must be one of/);
test("unknown type", rejects, { type: "MeshTimeout", name: "x", spec: {} }, "type", /must be one of/);
test("CRD without metadata.name", rejects, { apiVersion: "kuma.io/v1alpha1", kind: "MeshTrafficPermission", metadata: {}, spec: {} }, "metadata.name", /must be defined/);
test(
  "MRL from with a gateway-including scope",
  rejects,
  { type: "MeshRateLimit", name: "r", spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { local: { http: { disabled: true } } } }] } },
  "spec.from",
  /scope includes a Gateway/,
);
test(
  "MFI percentage above 100",
  rejects,
  { type: "MeshFaultInjection", name: "f", spec: { targetRef: { kind: "MeshService", name: "b" }, from: [{ targetRef: { kind: "Mesh" }, default: { http: [{ abort: { httpStatus: 500, percentage: "100.5" } }] } }] } },
  "spec.from[0].default.http[0].abort.percentage",
  /range \[0, 100\]/,
);

test("validate › returns every violation at once", (t) => {
  // given a policy with three independent problems; when validated; then all three are reported
  const { violations } = validatePolicyObject(mtp([{ targetRef: { kind: "Nope" }, default: { action: "x" } }], { kind: "MeshService" }), "2.6");
  t.deepEqual(violations.map((v) => v.field).sort(), ["spec.from[0].default.action", "spec.from[0].targetRef.kind", "spec.targetRef.name"]);
});

test("validate › accepts the Mesh with proxyTypes Sidecar MFI form the docs use", (t) => {
  const doc = { type: "MeshFaultInjection", name: "f", spec: { targetRef: { kind: "Mesh", proxyTypes: ["Sidecar"] }, from: [{ targetRef: { kind: "Mesh" }, default: { http: [{ delay: { value: "1m30s", percentage: 50 } }] } }] } };
  t.deepEqual(validatePolicyObject(doc, "2.6").violations, []);
});

test("parse › never throws on hostile or broken text", (t) => {
  // given alias bombs, binary junk and deep nesting; when parsed; then rejections come back, no exception
  const bomb = "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n";
  for (const text of [bomb, "\u0000\u0001\u0002", "[".repeat(5000), "{\"type\": 1}", ""]) {
    t.notThrows(() => parsePolicyText(text, "x.yaml"));
    t.is(parsePolicyText(text, "x.yaml").policies.length, 0);
  }
  t.true(parsePolicyText(bomb).rejected[0]!.violations[0]!.message.includes("alias"));
});

test("parse › reads JSON, lists and REST list bodies", (t) => {
  const p = { type: "MeshTrafficPermission", name: "a", spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Allow" } }] } };
  t.is(parsePolicyText(JSON.stringify(p)).policies.length, 1);
  t.is(parsePolicyText(JSON.stringify([p, { ...p, name: "b" }])).policies.length, 2);
  t.is(parsePolicyText(JSON.stringify({ items: [p], total: 1, next: null })).policies.length, 1);
});

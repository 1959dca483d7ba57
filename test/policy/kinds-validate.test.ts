// kinds validate › what documents/kinds.ts adds per kind: MeshGateway listener tags on MFI/MRL, a MeshHTTPRoute's `to` list and hostnames, the MTP `from` warning.
import test from "ava";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";
import type { KumaVersion } from "../../extproc/policy/model/kuma-version.js";

type Pairs = [string, string][];
const pairs = (list: readonly { field: string; message: string }[] | undefined): Pairs => (list ?? []).map((v) => [v.field, v.message]);

const GATEWAY = { kind: "MeshGateway", name: "gw", tags: { port: "8080" } };
const ANY_PATH = [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], default: {} }];
const doc = (type: string, spec: unknown) => ({ type, mesh: "default", name: "p", spec });
const route = (spec: unknown) => doc("MeshHTTPRoute", spec);

const verdict = test.macro({
  exec(t, policy: unknown, expected: Pairs, version: KumaVersion = "2.6") {
    // Given a policy document; when validated; then exactly these violations (none: it loads)
    const r = validatePolicyObject(policy, version);
    t.deepEqual(pairs(r.violations), expected);
    t.is(r.policy === undefined, expected.length > 0);
  },
  title: (provided = "") => `kinds validate › ${provided}`,
});

test("a MeshFaultInjection on a MeshGateway listener (tags) loads", verdict,
  doc("MeshFaultInjection", { targetRef: GATEWAY, to: [{ targetRef: { kind: "Mesh" }, default: { http: [{ abort: { httpStatus: 500, percentage: 50 } }] } }] }), []);
test("a MeshRateLimit on a MeshGateway listener (tags) loads", verdict,
  doc("MeshRateLimit", { targetRef: GATEWAY, to: [{ targetRef: { kind: "Mesh" }, default: { local: { http: { requestRate: { num: 1, interval: "1s" } } } } }] }), []);
test("a MeshHTTPRoute without `to` is rejected at spec.to", verdict, route({ targetRef: { kind: "Mesh" } }), [["spec.to", "must be defined"]]);
test("a MeshHTTPRoute `to` item that is not an object is rejected at that item alone", verdict, route({ targetRef: { kind: "Mesh" }, to: [5] }), [["spec.to[0]", "must be an object"]]);
test("a gateway route's hostname that is not a string is rejected at its index", verdict,
  route({ targetRef: GATEWAY, to: [{ targetRef: { kind: "Mesh" }, hostnames: ["a.example", 5], rules: ANY_PATH }] }), [["spec.to[0].hostnames[1]", "must be a string"]]);
test("a gateway route's hostnames that are not a list are rejected", verdict,
  route({ targetRef: GATEWAY, to: [{ targetRef: { kind: "Mesh" }, hostnames: "a.example", rules: ANY_PATH }] }), [["spec.to[0].hostnames", "must be a list"]]);

test("kinds validate › given an MTP `from` with an undefined item (a caller's JS value), when validated, then a violation and the other items' warnings, no throw", (t) => {
  const mtp = doc("MeshTrafficPermission", { targetRef: { kind: "Mesh" }, from: [undefined, { targetRef: { kind: "MeshService", name: "a" }, default: { action: "Allow" } }] });
  const r = validatePolicyObject(mtp, "2.14");
  t.deepEqual(pairs(r.violations), [["spec.from[0]", "must be defined"]]);
  t.deepEqual(pairs(r.warnings).map(([field]) => field), ["spec.from", "spec.from[1].targetRef.kind"]);
});

// engine edges › which inbound a request is decided on, what a failed compile leaves in force, and what a request
// whose evaluation throws gets (inbound fails closed; outbound continues unedited).
import test from "ava";
import type { RequestFacts } from "../../extproc/decision.js";
import { dataplaneFromObject } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import type { Policy } from "../../extproc/policy/model/types.js";

// Two inbounds: a (port 8080, named a-http) is denied to everyone, b (port 9090, named b-admin) has no policy.
// Built when a test asks, not at import: work done while the file is imported would make every mutant it reaches an
// import-time one for the mutation harness (a fresh process per mutant instead of a switch at run time).
const dataplane = () =>
  dataplaneFromObject({
    type: "Dataplane",
    name: "dp",
    networking: { inbound: [{ name: "a-http", port: 8080, tags: { "kuma.io/service": "a" } }, { name: "b-admin", port: 9090, tags: { "kuma.io/service": "b" } }] },
  }).dataplane!;
const denyA = () =>
  parsePolicyText(
    `type: MeshTrafficPermission
name: deny-a
mesh: default
spec:
  targetRef: {kind: MeshSubset, tags: {kuma.io/service: a}}
  from:
    - targetRef: {kind: Mesh}
      default: {action: Deny}
`,
    "deny-a.yaml",
  ).policies;

type Logged = { level: string; fields: Record<string, unknown>; message: string };
function engine(): { engine: PolicyEngine; logged: Logged[] } {
  const logged: Logged[] = [];
  const log = {
    error: (fields: Record<string, unknown>, message: string) => logged.push({ level: "error", fields, message }),
    info: (fields: Record<string, unknown>, message: string) => logged.push({ level: "info", fields, message }),
  };
  const e = new PolicyEngine({ dataplane: dataplane(), nowMs: () => 0, log: log as never });
  return { engine: e, logged };
}
const facts = (over: Partial<RequestFacts> = {}): RequestFacts => ({ direction: "inbound", method: "GET", path: "/", authority: "svc", scheme: "http", headers: new Map(), peerUriSans: [], ...over });

const inboundPicked = test.macro({
  exec(t, over: Partial<RequestFacts>, expected: "a" | "b") {
    // Given the two inbounds, a denied; when a request with these facts is decided; then it is decided on `expected`
    const { engine: e } = engine();
    e.replace(denyA());
    t.is(e.decide(facts(over)).explain.action, expected === "a" ? "deny" : "allow");
  },
  title: (provided = "") => `engine edges › inbound picked: ${provided}`,
});

test("no listener name and no port: the first", inboundPicked, {}, "a");
test(":authority's port names the second", inboundPicked, { authority: "svc:9090" }, "b");
test(":authority's port names the first", inboundPicked, { authority: "svc:8080" }, "a");
test("a port no inbound has: the first", inboundPicked, { authority: "svc:1" }, "a");
test("a port inside the host is not a port", inboundPicked, { authority: "svc:9090x" }, "a");
test("the listener's inbound by name", inboundPicked, { inbound: "b-admin" }, "b");
test("the listener's inbound by port", inboundPicked, { inbound: "9090" }, "b");
test("the listener's inbound wins over :authority's port", inboundPicked, { inbound: "a-http", authority: "svc:9090" }, "a");
test("an unknown listener name falls back to :authority's port", inboundPicked, { inbound: "nope", authority: "svc:9090" }, "b");

test("engine edges › /explain's inbound override picks by name or port", (t) => {
  // Given the two inbounds; when evaluated with an inbound override; then that inbound decides
  const { engine: e } = engine();
  e.replace(denyA());
  t.is(e.evaluate(facts({ authority: "svc:8080" }), { inbound: "b-admin" }).decision.explain.action, "allow");
  t.is(e.evaluate(facts({ authority: "svc:9090" }), { inbound: "8080" }).decision.explain.action, "deny");
});

test("engine edges › given a request whose inbound evaluation throws, then it fails closed with a 500 and an error line", (t) => {
  // Given an engine with a set in force
  const { engine: e, logged } = engine();
  e.replace(denyA());
  // When a request's facts make the evaluation throw (no header map: a transport bug)
  const d = e.decide(facts({ authority: "svc:9090", headers: undefined as never, requestId: "r-1" }));
  // Then the request is not allowed, even on the inbound no policy denies
  t.like(d, { type: "respond", status: 500, body: "policy evaluation failed", explain: { action: "deny", kind: "none" } });
  t.regex(d.explain.reason ?? "", /^engine error: /);
  t.like(logged, [{ level: "error", message: "policy evaluation failed", fields: { requestId: "r-1", direction: "inbound" } }]);
});

test("engine edges › given an outbound request whose evaluation throws, then it continues unedited (outbound policies grant nothing)", (t) => {
  // Given an engine with a set in force; when an outbound request's evaluation throws
  const { engine: e, logged } = engine();
  e.replace(denyA());
  const d = e.decide(facts({ direction: "outbound", authority: "payments:80", path: undefined as never }));
  // Then it continues with no edits, and the error is logged
  t.deepEqual(d, { type: "continue", explain: { action: "allow", kind: "none", reason: d.explain.reason } });
  t.regex(d.explain.reason ?? "", /^engine error: /);
  t.like(logged, [{ level: "error", fields: { direction: "outbound" } }]);
});

test("engine edges › given a set that fails to compile, then the set in force stays and the failure is reported", (t) => {
  // Given the deny set in force
  const { engine: e, logged } = engine();
  t.false(e.loaded);
  const first = e.replace(denyA());
  t.true(e.loaded);
  // When a set with a policy whose spec is missing is swapped in (validation would never let one through)
  const broken: Policy[] = [{ ...denyA()[0]!, spec: null as never }];
  const r = e.replace(broken);
  // Then the replace fails with the old version and count, the old set still decides, and an error is logged
  t.like(r, { ok: false, version: first.version, policies: 1 });
  t.regex(r.ok ? "" : (r.error ?? ""), /targetRef/);
  t.is(e.current()?.version, first.version);
  t.is(e.decide(facts()).explain.action, "deny");
  t.like(logged, [{ level: "error", message: "policy compile failed; keeping the previous policy set" }]);
});

test("engine edges › given a compile failure before any set, then nothing is in force and the count is 0", (t) => {
  // Given a fresh engine; when the first set fails to compile; then it reports 0 policies and stays unloaded
  const { engine: e } = engine();
  t.like(e.replace([{ ...denyA()[0]!, spec: null as never }]), { ok: false, version: 0, policies: 0 });
  t.false(e.loaded);
});

test("engine edges › the Kuma version followed applies from the next replace on", (t) => {
  // Given an engine following 2.14
  const e = new PolicyEngine({ dataplane: dataplane(), nowMs: () => 0, kumaVersion: "2.14" });
  e.replace(denyA());
  t.is(e.kumaVersion, "2.14");
  t.true(e.current()?.traits.meshIdentity);
  // When it is told to follow 2.6 and the set is replaced
  e.followKumaVersion("2.6");
  t.is(e.kumaVersion, "2.6");
  e.replace(denyA());
  // Then the snapshot carries 2.6's traits (no MeshIdentity before 2.12)
  t.false(e.current()?.traits.meshIdentity);
});

test("engine edges › with the audit on, a decision lists each matched policy item once and the client; off, it has none", (t) => {
  // Given an MTP whose two from items both match web, and an outbound route
  const policies = parsePolicyText(
    `type: MeshTrafficPermission
name: allow-web
mesh: default
spec:
  targetRef: {kind: Mesh}
  from:
    - targetRef: {kind: Mesh}
      default: {action: Deny}
    - targetRef: {kind: MeshService, name: web}
      default: {action: Allow}
---
type: MeshHTTPRoute
name: to-b
mesh: default
spec:
  targetRef: {kind: Mesh}
  to:
    - targetRef: {kind: MeshService, name: b}
      rules:
        - matches: [{path: {type: PathPrefix, value: /}}]
          default:
            filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x, value: "1"}]}}]
`,
    "audit.yaml",
  ).policies;
  const audited = new PolicyEngine({ dataplane: dataplane(), nowMs: () => 0, audit: true });
  audited.replace(policies);
  const web = facts({ headers: new Map([["x-forwarded-client-cert", "URI=spiffe://default/web"]]) });
  // When an inbound and an outbound request are decided
  const inbound = audited.decide(web);
  const outbound = audited.decide(facts({ direction: "outbound", authority: "b:80" }));
  // Then the inbound's audit names both items in order and the client; the outbound's the route rule, no client
  t.is(inbound.explain.action, "allow");
  t.deepEqual(inbound.audit?.(), { matched: ["MeshTrafficPermission/allow-web from[0]", "MeshTrafficPermission/allow-web from[1]"], client: { tags: "kuma.io/service=web", source: "xfcc" } });
  t.deepEqual(outbound.audit?.(), { matched: ["MeshHTTPRoute/to-b to[0].rules[0]"] });
  // and without the audit option no decision carries one
  const plain = new PolicyEngine({ dataplane: dataplane(), nowMs: () => 0 });
  plain.replace(policies);
  t.false("audit" in plain.decide(web));
});

test("engine edges › given policies replaced without resources, when the snapshot is read, then it holds no Mesh and no service resource", (t) => {
  const { engine: e } = engine();
  e.replace(denyA());
  t.deepEqual([e.current()?.resources.meshes, e.current()?.resources.services], [[], []]);
});

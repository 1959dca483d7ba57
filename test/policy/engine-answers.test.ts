// engine answers › what PolicyEngine decides at its edges: before any set, with no inbound to decide on, when evaluation throws (no logger), and the decision log's audit.
import test from "ava";
import type { RequestFacts } from "../../extproc/decision.js";
import { dataplaneFromObject } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { auditOf } from "../../extproc/policy/decide/audit.js";
import { describedIdentity } from "../../extproc/policy/decide/identity.js";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";

// Inbound a (8080, a-http) denied to everyone; b (9090, b-admin) without policy.
const dataplane = () =>
  dataplaneFromObject({
    type: "Dataplane",
    name: "dp",
    networking: { inbound: [{ name: "a-http", port: 8080, tags: { "kuma.io/service": "a" } }, { name: "b-admin", port: 9090, tags: { "kuma.io/service": "b" } }] },
  }).dataplane!;
const DENY_A = `type: MeshTrafficPermission
name: deny-a
mesh: default
spec:
  targetRef: {kind: MeshSubset, tags: {kuma.io/service: a}}
  from:
    - targetRef: {kind: Mesh}
      default: {action: Deny}
`;
const facts = (over: Partial<RequestFacts> = {}): RequestFacts => ({ direction: "inbound", method: "GET", path: "/", authority: "svc", scheme: "http", headers: new Map(), peerUriSans: [], ...over });
const loaded = (yaml = DENY_A, audit = false) => {
  const e = new PolicyEngine({ dataplane: dataplane(), nowMs: () => 0, audit });
  e.replace(parsePolicyText(yaml, "answers.yaml").policies);
  return e;
};

test("engine answers › before the first set an evaluation has an empty trace", (t) => {
  // given an engine with no set; when a request is evaluated; then it is answered 503 with nothing traced
  const ev = new PolicyEngine({ dataplane: dataplane(), nowMs: () => 0 }).evaluate(facts());
  t.like(ev.decision, { type: "respond", status: 503, explain: { action: "not-ready" } });
  t.deepEqual(ev.trace, []);
});

test("engine answers › an inbound override no inbound has: allowed as 'dataplane has no inbound', nothing traced", (t) => {
  // given the set in force; when /explain names an inbound the dataplane does not have
  const ev = loaded().evaluate(facts(), { inbound: "nope" });
  // then the request is allowed with that reason and an empty trace
  t.deepEqual(ev.decision, { type: "continue", explain: { action: "allow", kind: "none", reason: "dataplane has no inbound" } });
  t.deepEqual(ev.trace, []);
  t.is(ev.inbound, undefined);
});

test("engine answers › an unknown listener inbound falls back to :authority's port, here the denied one", (t) => {
  // given the set in force; when Envoy names a listener no inbound has and :authority names port 8080
  const d = loaded().decide(facts({ inbound: "nope", authority: "svc:8080" }));
  // then inbound a decides (deny)
  t.like(d, { type: "respond", status: 403, explain: { action: "deny", policy: "deny-a" } });
});

test("engine answers › without a logger a request whose evaluation throws still gets the 500, with no headers", (t) => {
  // given an engine with no log; when a request's facts make the evaluation throw (no header map)
  const e = new PolicyEngine({ dataplane: dataplane(), nowMs: () => 0 });
  e.replace(parsePolicyText(DENY_A, "answers.yaml").policies);
  const d = e.decide(facts({ headers: undefined as never }));
  // then it fails closed with a bare 500
  t.deepEqual(d, { type: "respond", status: 500, body: "policy evaluation failed", headers: [], explain: { action: "deny", kind: "none", reason: d.explain.reason } });
});

test("engine answers › the audit of an outbound request no route matches lists nothing", (t) => {
  // given an audited engine whose set has no route; when an outbound request is decided
  const d = loaded(DENY_A, true).decide(facts({ direction: "outbound", authority: "payments:80" }));
  // then its audit matched nothing and names no client
  t.deepEqual(d.audit?.(), { matched: [] });
});

test("engine answers › the audit lists an item once though the client falls in two regions holding it", (t) => {
  // given from items for the Mesh, web and api, and a client whose certificate names both web and api
  const e = loaded(
    `type: MeshTrafficPermission
name: mtp
mesh: default
spec:
  targetRef: {kind: Mesh}
  from:
    - targetRef: {kind: Mesh}
      default: {action: Allow}
    - targetRef: {kind: MeshService, name: web}
      default: {action: Allow}
    - targetRef: {kind: MeshService, name: api}
      default: {action: Allow}
`,
    true,
  );
  const d = e.decide(facts({ headers: new Map([["x-forwarded-client-cert", "URI=spiffe://default/web;URI=spiffe://default/api"]]) }));
  // when its audit is read; then from[0] (in both regions) is listed once
  t.deepEqual(d.audit?.().matched, ["MeshTrafficPermission/mtp from[0]", "MeshTrafficPermission/mtp from[2]", "MeshTrafficPermission/mtp from[1]"]);
});

test("engine answers › an audit of a described client (no cache key) names it by its tags", (t) => {
  // given a client described by its SPIFFE ID, as /explain gives one; when its audit is built
  const audit = auditOf(describedIdentity(["spiffe://default/web"], "default"), [], undefined);
  // then the client is its tag set
  t.deepEqual(audit, { matched: [], client: { tags: "kuma.io/service=web", source: "described" } });
});

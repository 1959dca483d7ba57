// One decision-log record built from a decision (extproc/decision-log/record.ts): every field and its order in the
// line, what is left out when unknown, the client's certificate URIs and SNI, the outcome, and which decisions are written.
import test from "ava";
import type { Decision, RequestFacts } from "../../extproc/decision.js";
import { decisionRecord, outcomeOf, shouldWrite } from "../../extproc/decision-log/record.js";

const facts = (over: Partial<RequestFacts> = {}): RequestFacts => ({ direction: "inbound", method: "GET", path: "/p", authority: "orders", scheme: "http", headers: new Map(), peerUriSans: [], ...over });
const allow: Decision = { type: "continue", explain: { action: "allow", kind: "none", reason: "no policy" } };
const never = () => {
  throw new Error("random() must not be called");
};

test("record › given every fact known, when a deny is recorded, then the line has every field, in the documented order", (t) => {
  // Given a denied, delayed request with an id, an inbound, a peer certificate, an SNI and two logged headers (one absent)
  const f = facts({ requestId: "r-1", inbound: "http", method: "POST", path: "/admin?token=x", peerUriSans: ["spiffe://td/a", "spiffe://td/b"], sni: "orders.mesh", headers: new Map([["x-team", "blue"], ["authorization", "secret"]]) });
  const d: Decision = {
    type: "respond", status: 403, body: "", headers: [], delayMs: 7,
    explain: { action: "deny", kind: "MeshTrafficPermission", policy: "mtp", rule: "from[0]", reason: "Deny" },
    audit: () => ({ client: { tags: "kuma.io/service=web", source: "peer-cert" }, matched: ["MeshTrafficPermission/mtp from[0]"] }),
  };
  // When it is recorded at 2026-01-02T03:04:05.678Z with a latency of 0.12345 ms
  const r = decisionRecord(f, d, 0.12345, Date.parse("2026-01-02T03:04:05.678Z"), ["x-team", "x-missing"], false, { mesh: "default", name: "backend-1" });
  // Then the JSON line is exactly this (field order included; latency to the microsecond; the query string cut)
  t.is(JSON.stringify(r), JSON.stringify({
    time: "2026-01-02T03:04:05.678Z", requestId: "r-1", dataplane: "backend-1", mesh: "default", inbound: "http", direction: "inbound", method: "POST", path: "/admin", authority: "orders",
    client: { tags: "kuma.io/service=web", source: "peer-cert", spiffe: "spiffe://td/a,spiffe://td/b", sni: "orders.mesh" },
    matched: ["MeshTrafficPermission/mtp from[0]"], outcome: "deny", status: 403, kind: "MeshTrafficPermission", policy: "mtp", rule: "from[0]", reason: "Deny", delayMs: 7, latencyMs: 0.123,
    headers: { "x-team": "blue" },
  }));
});

test("record › given nothing optional known, when an allow is recorded, then the line has only the fields every record has", (t) => {
  // Given a plain allow with no id, inbound, dataplane, audit, delay or logged headers
  const r = decisionRecord(facts({ direction: "outbound", path: "/x" }), allow, 2.0004, 0, []);
  // Then
  t.is(JSON.stringify(r), JSON.stringify({ time: "1970-01-01T00:00:00.000Z", direction: "outbound", method: "GET", path: "/x", authority: "orders", matched: [], outcome: "allow", kind: "none", reason: "no policy", latencyMs: 2 }));
});

test("record › given no audit, then matched comes from the explanation: Kind/policy and its rule when it has one", (t) => {
  const withRule: Decision = { type: "continue", explain: { action: "allow", kind: "MeshTrafficPermission", policy: "mtp", rule: "from[1]", reason: "r" } };
  const withoutRule: Decision = { type: "continue", explain: { action: "allow", kind: "MeshRateLimit", policy: "limits", reason: "r" } };
  t.deepEqual(decisionRecord(facts(), withRule, 0, 0, []).matched, ["MeshTrafficPermission/mtp from[1]"]);
  t.deepEqual(decisionRecord(facts(), withoutRule, 0, 0, []).matched, ["MeshRateLimit/limits"]);
  t.deepEqual(decisionRecord(facts(), allow, 0, 0, []).matched, []);
});

test("record › given a client known by XFCC, then spiffe lists the URIs of the nearest XFCC element; known by tags, no spiffe", (t) => {
  const audited = (source: string): Decision => ({ ...allow, audit: () => ({ client: { tags: "t", source }, matched: [] }) });
  const headers = new Map([["x-forwarded-client-cert", "By=spiffe://td/far;URI=spiffe://td/far,By=spiffe://td/me;URI=spiffe://td/web"]]);
  // When recorded with an XFCC client, a peer certificate that is ignored for it, and no SNI
  t.deepEqual(decisionRecord(facts({ headers, peerUriSans: ["spiffe://td/peer"] }), audited("xfcc"), 0, 0, []).client, { tags: "t", source: "xfcc", spiffe: "spiffe://td/web" });
  // And with an x-kuma-tags client: neither the certificate nor the XFCC header is its identity
  t.deepEqual(decisionRecord(facts({ headers, peerUriSans: ["spiffe://td/peer"] }), audited("x-kuma-tags"), 0, 0, []).client, { tags: "t", source: "x-kuma-tags" });
  // And with an XFCC client but no XFCC header (nothing to list), nor a peer certificate with no URI
  t.deepEqual(decisionRecord(facts(), audited("xfcc"), 0, 0, []).client, { tags: "t", source: "xfcc" });
  t.deepEqual(decisionRecord(facts(), audited("peer-cert"), 0, 0, []).client, { tags: "t", source: "peer-cert" });
});

test("record › given --decision-log-query, a path with a query string keeps it; without, a path with none is left whole", (t) => {
  t.is(decisionRecord(facts({ path: "/a?b=1" }), allow, 0, 0, [], true).path, "/a?b=1");
  t.is(decisionRecord(facts({ path: "/a/b" }), allow, 0, 0, []).path, "/a/b");
  t.is(decisionRecord(facts({ path: "/a?" }), allow, 0, 0, []).path, "/a");
});

test("record › the outcome: an allow with a delay is delay, without one (or a zero delay) allow; a deny stays deny whatever its delay", (t) => {
  t.is(outcomeOf({ ...allow, delayMs: 5 }), "delay");
  t.is(outcomeOf({ ...allow, delayMs: 0 }), "allow");
  t.is(outcomeOf(allow), "allow");
  t.is(outcomeOf({ type: "respond", status: 500, body: "", headers: [], delayMs: 5, explain: { action: "abort", kind: "MeshFaultInjection", reason: "r" } }), "abort");
  t.is(decisionRecord(facts(), { ...allow, delayMs: 5 }, 0, 0, []).delayMs, 5);
  t.false(JSON.stringify(decisionRecord(facts(), { ...allow, delayMs: 0 }, 0, 0, [])).includes("delayMs"), "a zero delay is not written");
});

test("record › which decisions are written: local replies and shadow denies always; allows by the sample, drawn against random()", (t) => {
  const respond: Decision = { type: "respond", status: 403, body: "", headers: [], explain: { action: "deny", kind: "none", reason: "r" } };
  const shadow: Decision = { type: "continue", explain: { action: "shadow-deny", kind: "MeshTrafficPermission", reason: "r" } };
  // Local replies and shadow denies: written at sample 0 without drawing
  t.true(shouldWrite(respond, 0, never));
  t.true(shouldWrite(shadow, 0, never));
  // Allows: at 1 always, at 0 never, without drawing; in between when the draw is under the sample
  t.true(shouldWrite(allow, 1, never));
  t.false(shouldWrite(allow, 0, never));
  t.true(shouldWrite(allow, 0.5, () => 0.4999));
  t.false(shouldWrite(allow, 0.5, () => 0.5));
});

// engine reload › what PolicyEngine.replace() keeps from the set in force: unchanged plans (unless told not to), the token buckets of inbounds still rate limited, and no crash without a logger.
import test from "ava";
import type { RequestFacts } from "../../extproc/decision.js";
import { dataplaneFromObject } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine, type PolicyEngineOptions } from "../../extproc/policy/decide/engine.js";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import type { Policy } from "../../extproc/policy/model/types.js";

const dataplane = () => dataplaneFromObject({ type: "Dataplane", name: "dp", networking: { inbound: [{ name: "a-http", port: 8080, tags: { "kuma.io/service": "a" } }] } }).dataplane!;
const engineWith = (opts: Partial<PolicyEngineOptions> = {}) => new PolicyEngine({ dataplane: dataplane(), nowMs: () => 0, ...opts });
/** Every document must be valid: a rejection throws, so a test never runs on a smaller set. */
const policies = (yaml: string): Policy[] => {
  const r = parsePolicyText(yaml, "reload.yaml");
  if (r.rejected.length > 0) throw new Error(JSON.stringify(r.rejected));
  return r.policies;
};
const request: RequestFacts = { direction: "inbound", method: "GET", path: "/", authority: "svc", scheme: "http", headers: new Map(), peerUriSans: [] };

// One request a minute on every inbound, on the 2.10+ rules path and on the from-based path.
const RULES_LIMIT = `type: MeshRateLimit
name: limit
mesh: default
spec:
  targetRef: {kind: Mesh, proxyTypes: [Sidecar]}
  rules:
    - default: {local: {http: {requestRate: {num: 1, interval: 1m}}}}
`;
const FROM_LIMIT = `type: MeshRateLimit
name: limit
mesh: default
spec:
  targetRef: {kind: Mesh, proxyTypes: [Sidecar]}
  from:
    - targetRef: {kind: Mesh}
      default: {local: {http: {requestRate: {num: 1, interval: 1m}}}}
`;
const DENY = `type: MeshTrafficPermission
name: deny
mesh: default
spec:
  targetRef: {kind: Mesh}
  from:
    - targetRef: {kind: Mesh}
      default: {action: Deny}
`;

const status = (e: PolicyEngine): number | "continue" => {
  const d = e.decide(request);
  return d.type === "respond" ? d.status : "continue";
};

test("engine reload › a set that leaves an inbound's plans unchanged keeps the plans in force", (t) => {
  // given a set in force; when the same set (read again: new objects) is replaced in
  const e = engineWith();
  e.replace(policies(DENY));
  const before = e.current()!;
  t.true(e.replace(policies(DENY)).ok);
  // then the new snapshot carries the same MTP plan and outbound plan
  t.not(e.current(), before);
  t.is(e.current()!.inbounds[0]!.from.MeshTrafficPermission, before.inbounds[0]!.from.MeshTrafficPermission);
  t.is(e.current()!.outbound, before.outbound);
});

test("engine reload › with reusePlans false every replace compiles the inbound's plan anew", (t) => {
  // given an engine told not to reuse plans and a set in force; when the same set is replaced in
  const e = engineWith({ reusePlans: false });
  e.replace(policies(DENY));
  const before = e.current()!;
  e.replace(policies(DENY));
  // then the plans are new ones (deciding the same)
  t.not(e.current()!.inbounds[0]!.from.MeshTrafficPermission, before.inbounds[0]!.from.MeshTrafficPermission);
  t.not(e.current()!.outbound, before.outbound);
  t.is(status(e), 403);
});

test("engine reload › a rate-limited inbound's bucket survives a reload that keeps the limit", (t) => {
  // given the rules-path limit with its one token taken
  const e = engineWith();
  e.replace(policies(RULES_LIMIT));
  t.is(status(e), "continue");
  t.is(status(e), 429);
  // when the same set is replaced in; then the bucket is still empty
  e.replace(policies(RULES_LIMIT));
  t.is(status(e), 429);
});

test("engine reload › a bucket is dropped with its inbound's limit: the limit back starts with a full bucket", (t) => {
  // given the limit with its one token taken
  const e = engineWith();
  e.replace(policies(RULES_LIMIT));
  status(e);
  t.is(status(e), 429);
  // when a set without the limit is in force, then the limit is back
  e.replace(policies(DENY));
  e.replace(policies(RULES_LIMIT));
  // then the bucket is a new, full one
  t.is(status(e), "continue");
});

test("engine reload › moving a limit from `from` to `rules` at the same rate keeps the inbound's bucket", (t) => {
  // given the from-based limit with its one token taken
  const e = engineWith();
  e.replace(policies(FROM_LIMIT));
  t.is(status(e), "continue");
  t.is(status(e), 429);
  // when the same rate moves to a catch-all rule (the inbound's base route); then the bucket carries over
  e.replace(policies(RULES_LIMIT));
  t.is(status(e), 429);
});

test("engine reload › without a logger a failed compile is still reported, not thrown", (t) => {
  // given an engine with no log; when a set whose spec is missing is replaced in
  const e = engineWith();
  const r = e.replace([{ ...policies(DENY)[0]!, spec: null as never }]);
  // then the replace reports the failure
  t.like(r, { ok: false, version: 0, policies: 0 });
});

test("engine reload › a failed compile's error line carries the error", (t) => {
  // given an engine with a log; when a broken set is replaced in
  const logged: Array<{ fields: Record<string, unknown>; message: string }> = [];
  const log = { debug: () => {}, info: () => {}, error: (fields: Record<string, unknown>, message: string) => logged.push({ fields, message }) };
  const e = engineWith({ log });
  const r = e.replace([{ ...policies(DENY)[0]!, spec: null as never }]);
  // then the line holds the Error the replace reports
  t.is(logged.length, 1);
  t.true(logged[0]!.fields.err instanceof Error);
  t.is((logged[0]!.fields.err as Error).message, String(r.error));
});

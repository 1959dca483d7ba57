// inbound steps › what each inbound kind's step (kinds.ts, outcomes.ts, faults.ts) puts in a decision and its trace, and that a repeated client reuses its worked-out steps.
import test from "ava";
import type { RequestFacts } from "../../extproc/decision.js";
import { parseExplainInput } from "../../extproc/policy/views/explain.js";
import { compileFaults, sampleFaults } from "../../extproc/policy/decide/faults.js";
import { MTLS_MESH, ORDERS_DATAPLANE, yamlEngine, type YamlEngine } from "./yaml-engine.js";

const TD = "spiffe://default.z1.mesh.local";
const WEB = `${TD}/ns/shop/sa/web`;
const BATCH = `${TD}/ns/shop/sa/batch`;
const SLOW = `${TD}/ns/shop/sa/slow`;

// batch: a 5 s delay then a 503 abort, both always; slow: a 5 s delay only; web: no rule.
const FAULTS = `
type: MeshFaultInjection
mesh: default
name: faults
spec:
  targetRef: {kind: Mesh, proxyTypes: [Sidecar]}
  rules:
    - matches: [{spiffeID: {type: Exact, value: "${BATCH}"}}]
      default: {http: [{delay: {value: 5s, percentage: 100}, abort: {httpStatus: 503, percentage: 100}}]}
    - matches: [{spiffeID: {type: Exact, value: "${SLOW}"}}]
      default: {http: [{delay: {value: 5s, percentage: 100}}]}
`;
const ALLOW_ALL = `
type: MeshTrafficPermission
mesh: default
name: allow-all
spec:
  rules:
    - default:
        allow: [{spiffeID: {type: Prefix, value: "${TD}"}}]
`;
const NEVER_ABORT = `
type: MeshFaultInjection
mesh: default
name: never
spec:
  targetRef: {kind: Mesh, proxyTypes: [Sidecar]}
  rules:
    - default: {http: [{abort: {httpStatus: 500, percentage: 0}}]}
`;
const ONE_PER_MINUTE = `
type: MeshRateLimit
mesh: default
name: one-per-minute
spec:
  targetRef: {kind: Mesh, proxyTypes: [Sidecar]}
  rules:
    - default: {local: {http: {requestRate: {num: 1, interval: 1m}}}}
`;

const engineOf = (...docs: string[]): YamlEngine => yamlEngine([ORDERS_DATAPLANE, ...docs].join("\n---\n"));

/** The full evaluation of one request from `spiffeID` (described, as /explain gives it) to inbound http. */
function evaluate(e: YamlEngine, spiffeID: string) {
  const { input } = parseExplainInput({ inbound: "http", client: { spiffeID } }, "default");
  return e.engine.evaluate(input!.facts, { identity: input!.identity, inbound: input!.inbound });
}

/** A request from a peer certificate with `spiffeID`, as the transport gives it (the engine caches the client). */
const fromPeer = (spiffeID: string): RequestFacts => ({ direction: "inbound", method: "GET", path: "/", authority: "orders", scheme: "http", headers: new Map(), peerUriSans: [spiffeID], inbound: "http" });

test("inbound steps › a client no MeshFaultInjection rule matches is traced under the kind as 'no rule for client'", (t) => {
  // given fault rules for batch and slow only; when web calls
  const ev = evaluate(engineOf(FAULTS), WEB);
  // then the request continues and the fault step's trace names the kind, with no hits
  t.is(ev.decision.type, "continue");
  t.like(ev.trace, [{ kind: "MeshFaultInjection", outcome: "no rule for client", hits: [] }]);
});

test("inbound steps › a sampled delay is traced with its length and delays the request", (t) => {
  // given slow's 5 s delay; when slow calls
  const ev = evaluate(engineOf(FAULTS), SLOW);
  // then the request continues 5 s late, traced as the delay under the kind with the rule hit
  t.like(ev.decision, { type: "continue", delayMs: 5000, explain: { action: "allow", kind: "MeshFaultInjection", reason: `client ${SLOW} via described: delayed 5000ms` } });
  t.like(ev.trace, [{ kind: "MeshFaultInjection", outcome: "delay 5000ms" }]);
  t.is(ev.trace[0]!.hits!.length, 1);
});

test("inbound steps › an abort after a delay answers the abort status, still delayed, traced as the abort", (t) => {
  // given batch's delay then abort; when batch calls
  const ev = evaluate(engineOf(FAULTS), BATCH);
  // then the 503 is answered after the delay
  t.like(ev.decision, { type: "respond", status: 503, body: "fault filter abort", delayMs: 5000, explain: { action: "abort", policy: "faults", rule: "rules[0].default.http[0]" } });
  t.like(ev.trace, [{ kind: "MeshFaultInjection", outcome: "abort 503" }]);
});

test("inbound steps › a matching fault rule without an http list adds no element: the next rule's abort is element 0 of the stack", (t) => {
  // given a rule for batch with no faults before batch's abort
  const e = engineOf(`
type: MeshFaultInjection
mesh: default
name: empty-then-abort
spec:
  targetRef: {kind: Mesh, proxyTypes: [Sidecar]}
  rules:
    - matches: [{spiffeID: {type: Exact, value: "${BATCH}"}}]
      default: {}
    - matches: [{spiffeID: {type: Exact, value: "${BATCH}"}}]
      default: {http: [{abort: {httpStatus: 503, percentage: 100}}]}
`);
  // when batch calls; then the abort is http[0] of the stacked list, named after the rule that set it
  t.like(evaluate(e, BATCH).decision.explain, { action: "abort", rule: "rules[1].default.http[0]", reason: `client ${BATCH} via described: abort 503 from http[0]` });
});

test("inbound steps › a client over the limit gets the 429 with Envoy's local_rate_limited body", (t) => {
  // given one request a minute; when web calls twice
  const e = engineOf(ONE_PER_MINUTE);
  t.is(evaluate(e, WEB).decision.type, "continue");
  const limited = evaluate(e, WEB).decision;
  // then the second is answered as Envoy's local rate limit answers it, traced as rate limited under the kind
  t.like(limited, { type: "respond", status: 429, body: "local_rate_limited", explain: { action: "rate-limit" } });
  t.like(evaluate(e, WEB).trace, [{ kind: "MeshRateLimit", outcome: "rate limited" }]);
});

test("inbound steps › a repeated client's usual outcome of every kind is the same trace entry, worked out once", (t) => {
  // given an MTP allowing everyone, a fault that never fires and a limit the client stays within
  const e = engineOf(MTLS_MESH, ALLOW_ALL, NEVER_ABORT, ONE_PER_MINUTE);
  // when the same peer calls twice (a minute apart, so both are within the limit)
  const first = e.engine.evaluate(fromPeer(WEB));
  e.advance(60_000);
  const second = e.engine.evaluate(fromPeer(WEB));
  // then each kind's trace entry is the one worked out for the first request, with the usual outcome
  t.deepEqual(first.trace.map((k) => [k.kind, k.outcome]), [
    ["MeshTrafficPermission", "allow"],
    ["MeshFaultInjection", "no fault sampled"],
    ["MeshRateLimit", "within 1 per 60000ms"],
  ]);
  t.is(second.trace.length, 3);
  for (let i = 0; i < 3; i++) t.is(second.trace[i], first.trace[i], `${first.trace[i]!.kind}'s trace entry`);
});

test("inbound steps › a fault percentage is a strict bound: a draw of exactly p/100 misses", (t) => {
  // given an abort of 50 %; when the random source draws 0.5 (the 50th percentile); then no abort
  const faults = compileFaults([{ abort: { httpStatus: 500, percentage: 50 } }]);
  t.deepEqual(sampleFaults(faults, () => 0.5), { delayMs: 0 });
  // and a draw just under it aborts
  t.deepEqual(sampleFaults(faults, () => 0.49), { delayMs: 0, abort: { httpStatus: 500, element: 0 } });
});

test("inbound steps › a client whose MeshRateLimit is disabled is traced as 'rate limiting disabled' and never limited", (t) => {
  // given one request a minute, then a later policy that disables the limit
  const e = engineOf(ONE_PER_MINUTE, `
type: MeshRateLimit
mesh: default
name: z-off
spec:
  targetRef: {kind: Mesh, proxyTypes: [Sidecar]}
  rules:
    - default: {local: {http: {disabled: true}}}
`);
  // when web calls twice within the minute; then both continue, the limit step traced as disabled
  for (let i = 0; i < 2; i++) {
    const ev = evaluate(e, WEB);
    t.is(ev.decision.type, "continue");
    t.like(ev.trace, [{ kind: "MeshRateLimit", outcome: "rate limiting disabled" }]);
  }
});

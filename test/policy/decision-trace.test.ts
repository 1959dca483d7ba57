// decision trace › what an inbound evaluation records per policy kind (the outcome each kind came to, the matched
// from regions) and what the decision log's audit built from it lists, for the from-based and the 2.14 rules paths.
import test from "ava";
import { parseExplainInput } from "../../extproc/policy/views/explain.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { MTLS_MESH, ORDERS_DATAPLANE, yamlEngine } from "./yaml-engine.js";

const TD = "spiffe://default.z1.mesh.local";
const WEB = `${TD}/ns/shop/sa/web`;

/** The engine's full evaluation of a request from `spiffeID` to inbound http of orders-1 under these documents. */
function evaluate(docs: string[], spiffeID = WEB) {
  const e = yamlEngine([MTLS_MESH, ORDERS_DATAPLANE, ...docs].join("\n---\n"));
  const { input } = parseExplainInput({ inbound: "http", client: { spiffeID } }, "default");
  return e.engine.evaluate(input!.facts, { identity: input!.identity, inbound: input!.inbound });
}

const ALLOW_RULES = `
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
  from:
    - targetRef: {kind: Mesh}
      default:
        http: [{abort: {httpStatus: 500, percentage: 0}}]
`;
const NO_LIMIT = `
type: MeshRateLimit
mesh: default
name: off
spec:
  targetRef: {kind: Mesh, proxyTypes: [Sidecar]}
  from:
    - targetRef: {kind: Mesh}
      default:
        local: {http: {disabled: true}}
`;
const LIMIT_OTHERS = `
type: MeshRateLimit
mesh: default
name: others
spec:
  targetRef: {kind: Mesh, proxyTypes: [Sidecar]}
  rules:
    - matches: [{spiffeID: {type: Exact, value: "${TD}/ns/shop/sa/other"}}]
      default:
        local: {http: {requestRate: {num: 1, interval: 1s}}}
`;

const outcomes = (docs: string[]) => evaluate(docs).trace.map((k) => [k.kind, k.outcome]);

test("decision trace › given a MeshFaultInjection at 0 % and a disabled MeshRateLimit for the client, when a request is evaluated, then each kind's outcome says so", (t) => {
  t.deepEqual(outcomes([ALLOW_RULES, NEVER_ABORT, NO_LIMIT]), [
    ["MeshTrafficPermission", "allow"],
    ["MeshFaultInjection", "no fault sampled"],
    ["MeshRateLimit", "rate limiting disabled"],
  ]);
});

test("decision trace › given a MeshRateLimit rule for another client only, when a request is evaluated, then its outcome is that no rule is for the client", (t) => {
  t.deepEqual(outcomes([ALLOW_RULES, LIMIT_OTHERS]), [
    ["MeshTrafficPermission", "allow"],
    ["MeshRateLimit", "no rule for client"],
  ]);
});

test("decision trace › given the audit on and an MTP on the rules path, when a client is allowed, then its audit lists no from item", (t) => {
  // Given the documents' engine rebuilt with the decision log's audit on
  const built = yamlEngine([MTLS_MESH, ORDERS_DATAPLANE, ALLOW_RULES, LIMIT_OTHERS].join("\n---\n")).engine;
  const snap = built.current()!;
  const audited = new PolicyEngine({ dataplane: snap.dataplane, nowMs: () => 0, audit: true });
  audited.replace(snap.policies, snap.resources);
  const { input } = parseExplainInput({ inbound: "http", client: { spiffeID: WEB } }, "default");
  // When the request, from web's certificate, is decided
  const decision = audited.decide({ ...input!.facts, peerUriSans: [WEB] });
  // Then it is allowed and the audit lists no from item (rules have none)
  t.is(decision.explain.action, "allow");
  t.deepEqual(decision.audit?.().matched, []);
});

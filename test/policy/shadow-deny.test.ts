// shadow-deny › AllowWithShadowDeny stays visible when other policies act on the same request: the
// decision reports shadow-deny and the engine writes its "policy would deny" info line.
import test from "ava";
import type { RequestFacts } from "../../extproc/decision.js";
import { dataplaneFromTags } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine, type DecisionLog } from "../../extproc/policy/decide/engine.js";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { seededRandom } from "../../extproc/policy/decide/random.js";

const POLICIES = `
type: MeshTrafficPermission
mesh: default
name: shadow
spec:
  targetRef: {kind: MeshService, name: backend}
  from:
    - targetRef: {kind: Mesh}
      default: {action: AllowWithShadowDeny}
---
type: MeshFaultInjection
mesh: default
name: delay
spec:
  targetRef: {kind: MeshService, name: backend}
  from:
    - targetRef: {kind: Mesh}
      default:
        http: [{delay: {value: 2s, percentage: 100}}]
`;

function engineWithLog(): { engine: PolicyEngine; infos: Array<{ obj: Record<string, unknown>; msg: string }> } {
  const infos: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  const log: DecisionLog = { debug() {}, error() {}, info: (obj, msg) => void infos.push({ obj: obj as Record<string, unknown>, msg }) };
  const dataplane = dataplaneFromTags("default", "kuma.io/service=backend").dataplane!;
  const engine = new PolicyEngine({ dataplane, random: seededRandom(1), nowMs: () => 0, log });
  const { policies, rejected } = parsePolicyText(POLICIES, "shadow.yaml");
  if (rejected.length > 0) throw new Error(JSON.stringify(rejected));
  engine.replace(policies);
  return { engine, infos };
}

function inboundFrom(service: string): RequestFacts {
  const headers = new Map([["x-forwarded-client-cert", `URI=spiffe://default/${service}`]]);
  return { direction: "inbound", method: "GET", path: "/", authority: "backend:8080", scheme: "http", headers, peerUriSans: [] };
}

test("shadow-deny › a MeshFaultInjection delay keeps the shadow-deny verdict and its log line", (t) => {
  // Planted bug this catches: in decideInbound, dropping the `allow.action !== "shadow-deny"` guard so the
  // delay's explanation always replaces the MeshTrafficPermission one (`allow = fault.explain`); the
  // request then reports plain "allow" and no "policy would deny" line is logged.
  // given AllowWithShadowDeny for every client and a 2s delay at 100% on the same inbound
  const { engine, infos } = engineWithLog();
  // when orders sends a request
  const d = engine.decide(inboundFrom("orders"));
  // then it continues after the delay, reported as shadow-deny by the MeshTrafficPermission
  t.is(d.type, "continue");
  t.is(d.delayMs, 2000);
  t.is(d.explain.action, "shadow-deny");
  t.is(d.explain.kind, "MeshTrafficPermission");
  t.is(d.explain.policy, "shadow");
  t.regex(d.explain.reason, /would be denied.*delayed 2000ms/);
  // and the engine wrote the info line operators look for
  const would = infos.filter((l) => l.msg.includes("would deny"));
  t.is(would.length, 1);
  t.is(would[0]!.obj.policy, "shadow");
});

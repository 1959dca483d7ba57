// per-client plans › what the engine keeps per client (compiled fault lists, rate-limit plans) only saves
// work: every request still draws its faults and takes its token, and a new policy set starts afresh.
import test from "ava";
import type { Decision, RequestFacts } from "../../extproc/decision.js";
import { dataplaneFromTags, type Dataplane } from "../../extproc/policy/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/engine.js";
import { validatePolicyObject } from "../../extproc/policy/parse.js";
import type { Policy } from "../../extproc/policy/types.js";

const TD = "spiffe://default.z1.mesh.local";
const WEB_214 = `${TD}/ns/shop/sa/web`;

function policy(doc: object): Policy {
  const { policy, violations } = validatePolicyObject(doc);
  if (!policy) throw new Error(JSON.stringify(violations));
  return policy;
}

/** Backend allows web, delays it 7ms half the time and limits it to `perSecond`, in the 2.6 or the 2.14 dialect. */
function policies(dialect: "2.6" | "2.14", perSecond: number): Policy[] {
  const limit = { local: { http: { requestRate: { num: perSecond, interval: "1s" } } } };
  const delay = { http: [{ delay: { value: "7ms", percentage: 50 } }] };
  if (dialect === "2.6") {
    const targetRef = { kind: "MeshService", name: "backend" };
    const web = { kind: "MeshService", name: "web" };
    return [
      policy({ type: "MeshTrafficPermission", name: "allow-web", spec: { targetRef, from: [{ targetRef: web, default: { action: "Allow" } }] } }),
      policy({ type: "MeshFaultInjection", name: "delay-web", spec: { targetRef, from: [{ targetRef: web, default: delay }] } }),
      policy({ type: "MeshRateLimit", name: "limit", spec: { targetRef, from: [{ targetRef: { kind: "Mesh" }, default: limit }] } }),
    ];
  }
  const targetRef = { kind: "Dataplane", labels: { app: "backend" } };
  const web = { spiffeID: { type: "Exact", value: WEB_214 } };
  return [
    policy({ type: "MeshTrafficPermission", name: "allow-web", spec: { targetRef, rules: [{ default: { allow: [web] } }] } }),
    policy({ type: "MeshFaultInjection", name: "delay-web", spec: { targetRef, rules: [{ matches: [web], default: delay }] } }),
    policy({ type: "MeshRateLimit", name: "limit", spec: { targetRef, rules: [{ default: limit }] } }),
  ];
}

function setup(dialect: "2.6" | "2.14", draws: number[]): { engine: PolicyEngine; decide: () => Decision } {
  const tagged = dataplaneFromTags("default", "kuma.io/service=backend").dataplane!;
  const dataplane: Dataplane = dialect === "2.14" ? { ...tagged, labels: { app: "backend" } } : tagged;
  let i = 0;
  const engine = new PolicyEngine({ dataplane, nowMs: () => 0, random: () => draws[i++ % draws.length]!, kumaVersion: dialect });
  const uri = dialect === "2.14" ? WEB_214 : "spiffe://default/web";
  const facts: RequestFacts = { direction: "inbound", method: "GET", path: "/", authority: "backend:8080", scheme: "http", headers: new Map([["x-forwarded-client-cert", `URI=${uri}`]]), peerUriSans: [] };
  return { engine, decide: () => engine.decide(facts) };
}

for (const dialect of ["2.6", "2.14"] as const) {
  test(`per-client plans › ${dialect}: the same client is sampled and counted on every request`, (t) => {
    // given web limited to 3 per second and delayed at 50%, with draws alternating miss and hit
    const { engine, decide } = setup(dialect, [0.9, 0.1]);
    engine.replace(policies(dialect, 3));
    // when web sends four requests in the same millisecond
    const decisions = [1, 2, 3, 4].map(decide);
    // then the delays alternate and the fourth request is over the limit
    t.deepEqual(decisions.slice(0, 3).map((d) => [d.type, d.delayMs ?? 0]), [["continue", 0], ["continue", 7], ["continue", 0]]);
    t.is(decisions[3]!.explain.action, "rate-limit");
  });

  test(`per-client plans › ${dialect}: a new policy set is decided by its own rate, not a cached one`, (t) => {
    // given web limited to 1 per second and one request taken
    const { engine, decide } = setup(dialect, [0.9]);
    engine.replace(policies(dialect, 1));
    t.is(decide().explain.action, "allow");
    t.is(decide().explain.action, "rate-limit");
    // when the set changes to 2 per second
    engine.replace(policies(dialect, 2));
    // then the new rate's bucket (full) decides: two more pass, the next is limited
    t.deepEqual([1, 2, 3].map(() => decide().explain.action), ["allow", "allow", "rate-limit"]);
  });
}

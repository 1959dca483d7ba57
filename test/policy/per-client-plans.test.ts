// per-client plans › what the engine keeps per client (its steps per inbound, compiled fault lists, rate-limit
// plans) only saves work: every request still draws its faults and takes its token, a new policy set starts
// afresh, and a client calling two inbounds gets each one's decision.
import test from "ava";
import type { Decision, RequestFacts } from "../../extproc/decision.js";
import { dataplaneFromTags, type Dataplane } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";
import type { Policy } from "../../extproc/policy/model/types.js";

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

  test(`per-client plans › ${dialect}: a client allowed under one set is denied under the next`, (t) => {
    // given web allowed, decided once
    const { engine, decide } = setup(dialect, [0.9]);
    engine.replace(policies(dialect, 100));
    t.is(decide().explain.action, "allow");
    // when the set's MeshTrafficPermission denies web instead
    engine.replace([denyWeb(dialect)]);
    // then web's next request is denied by it, and allowed again once the first set is back
    const denied = decide();
    t.deepEqual([denied.type, denied.explain.action, denied.explain.policy], ["respond", "deny", "deny-web"]);
    engine.replace(policies(dialect, 100));
    t.is(decide().explain.action, "allow");
  });
}

/** A MeshTrafficPermission on backend that denies web. */
function denyWeb(dialect: "2.6" | "2.14"): Policy {
  if (dialect === "2.6") return policy({ type: "MeshTrafficPermission", name: "deny-web", spec: { targetRef: { kind: "MeshService", name: "backend" }, from: [{ targetRef: { kind: "MeshService", name: "web" }, default: { action: "Deny" } }] } });
  return policy({ type: "MeshTrafficPermission", name: "deny-web", spec: { targetRef: { kind: "Dataplane", labels: { app: "backend" } }, rules: [{ default: { deny: [{ spiffeID: { type: "Exact", value: WEB_214 } }] } }] } });
}

test("per-client plans › a client calling two inbounds in turn gets each inbound's decision", (t) => {
  // given backend on :8080 allowing web and admin on :9090 allowing nobody
  const dataplane: Dataplane = { mesh: "default", name: "dp", proxyType: "Sidecar", inbounds: [
    { name: "8080", port: 8080, tags: { "kuma.io/service": "backend" } },
    { name: "9090", port: 9090, tags: { "kuma.io/service": "admin" } },
  ] };
  const engine = new PolicyEngine({ dataplane, nowMs: () => 0, random: () => 0.5, kumaVersion: "2.6" });
  engine.replace([
    policy({ type: "MeshTrafficPermission", name: "backend", spec: { targetRef: { kind: "MeshService", name: "backend" }, from: [{ targetRef: { kind: "MeshService", name: "web" }, default: { action: "Allow" } }] } }),
    policy({ type: "MeshTrafficPermission", name: "admin", spec: { targetRef: { kind: "MeshService", name: "admin" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Deny" } }] } }),
  ]);
  const headers = new Map([["x-forwarded-client-cert", "URI=spiffe://default/web"]]);
  const to = (authority: string): RequestFacts => ({ direction: "inbound", method: "GET", path: "/", authority, scheme: "http", headers, peerUriSans: [] });
  // when web calls backend, admin, backend, admin
  const decided = ["backend:8080", "admin:9090", "backend:8080", "admin:9090"].map((a) => engine.decide(to(a)));
  // then each request gets its own inbound's decision
  t.deepEqual(decided.map((d) => `${d.explain.action} ${d.explain.policy}`), ["allow backend", "deny admin", "allow backend", "deny admin"]);
});

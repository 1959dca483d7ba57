// from-region merges › a legacy `from` plan merges each region's confs once, however many clients reach it:
// new clients that no `from` item names share the region without positives (Kuma 2.14's cliques give one per
// clique), so a new client's decision costs no merge (issue 31: one merge per clique per new client).
import test from "ava";
import type { RequestFacts } from "../../extproc/decision.js";
import { dataplaneFromTags } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";
import type { KumaVersion } from "../../extproc/policy/model/kuma-version.js";
import type { Policy } from "../../extproc/policy/model/types.js";

const NAMED_CLIENTS = 40;

function policy(doc: object): Policy {
  const { policy, violations } = validatePolicyObject(doc);
  if (!policy) throw new Error(JSON.stringify(violations));
  return policy;
}

/**
 * Backend denies the mesh and allows web (in a policy named to lose ties); one MTP and one MFI per named client
 * (each a clique of its own with the Mesh item).
 */
function policies(): Policy[] {
  const targetRef = { kind: "MeshService", name: "backend" };
  const out = [policy({ type: "MeshTrafficPermission", name: "z-backend", spec: { targetRef, from: [
    { targetRef: { kind: "Mesh" }, default: { action: "Deny" } },
    { targetRef: { kind: "MeshService", name: "web" }, default: { action: "Allow" } },
  ] } })];
  for (let i = 0; i < NAMED_CLIENTS; i++) {
    const client = { kind: "MeshService", name: `client-${i}` };
    out.push(policy({ type: "MeshTrafficPermission", name: `mtp-${i}`, spec: { targetRef, from: [{ targetRef: client, default: { action: "Allow" } }] } }));
    out.push(policy({ type: "MeshFaultInjection", name: `mfi-${i}`, spec: { targetRef, from: [{ targetRef: client, default: { http: [{ delay: { value: "1ms", percentage: 100 } }] } }] } }));
  }
  return out;
}

function request(service: string): RequestFacts {
  const xfcc = `By=spiffe://default/backend;Hash=0;URI=spiffe://default/${service}`;
  return { direction: "inbound", method: "GET", path: "/", authority: "backend:8080", scheme: "http", headers: new Map([["x-forwarded-client-cert", xfcc]]), peerUriSans: [] };
}

function setup(kumaVersion: KumaVersion): { engine: PolicyEngine; merges: () => { mtp: number; mfi: number } } {
  const dataplane = dataplaneFromTags("default", "kuma.io/service=backend").dataplane!;
  const engine = new PolicyEngine({ dataplane, nowMs: () => 0, random: () => 0.5, kumaVersion });
  engine.replace(policies());
  const from = engine.current()!.inbounds[0]!.from;
  return { engine, merges: () => ({ mtp: from.MeshTrafficPermission!.merges, mfi: from.MeshFaultInjection!.merges }) };
}

for (const version of ["2.14", "2.13.0"] as const) {
  test(`from-region merges › ${version}: new clients no item names cost no merge after the first`, (t) => {
    // given backend's MTP and MFIs naming web and 40 clients (cliques at 2.14, one component at 2.13.0)
    const { engine, merges } = setup(version);
    // when 500 clients never seen before call, each once
    const actions = Array.from({ length: 500 }, (_, i) => engine.decide(request(`new-${i}`)).explain.action);
    // then each is denied by the Mesh item, and the only region merged is the one without positives (no MFI region at all)
    t.deepEqual([...new Set(actions)], ["deny"]);
    t.deepEqual(merges(), { mtp: 1, mfi: 0 });
  });

  test(`from-region merges › ${version}: a named client's region is merged once, for its first request only`, (t) => {
    // given the same set, after one new client
    const { engine, merges } = setup(version);
    engine.decide(request("new-0"));
    const before = merges();
    // when client-3 calls three times (a fresh identity each time: the engine's identity cache is cleared by a replace)
    const decisions = [1, 2, 3].map(() => {
      const d = engine.decide(request("client-3"));
      engine.replace(policies());
      return d;
    });
    // then it is allowed and delayed each time, and its MTP and MFI regions were merged once each
    t.deepEqual(decisions.map((d) => [d.explain.action, d.delayMs]), [["allow", 1], ["allow", 1], ["allow", 1]]);
    t.deepEqual(merges(), { mtp: before.mtp + 1, mfi: before.mfi + 1 });
  });
}

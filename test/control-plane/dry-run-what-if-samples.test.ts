// whatIfOnSamples in process: which dataplanes a dry run's what-if covers (a targetRef naming a MeshHTTPRoute too), in name order, replayed with the mesh's own resources.
import test from "ava";
import { DEFAULT_KUMA_VERSION } from "../../extproc/kuma-rest/kuma-version.js";
import { dataplaneFromObject, type Dataplane } from "../../extproc/policy/documents/dataplane.js";
import { validatePolicyObject, type Policy } from "../../extproc/policy/documents/parse.js";
import { DecisionSamples } from "../../extproc/control-plane/decision-samples.js";
import { whatIfOnSamples, type WhatIfInput } from "../../extproc/control-plane/dry-run-what-if.js";
import type { RouteContext } from "../../extproc/control-plane/route-context.js";
import { allowedDecisionRecord, dataplane, mtp } from "./helpers.js";

const dp = (name: string, service = "backend"): Dataplane => dataplaneFromObject(dataplane(name, service)).dataplane!;
const policy = (doc: unknown): Policy => validatePolicyObject(doc).policy!;

/** MeshHTTPRoute `name` on `service`, and a MeshRateLimit `name` whose targetRef is that route (selects what the route does). */
const route = (name: string, service: string) => policy({ type: "MeshHTTPRoute", mesh: "default", name, spec: { targetRef: { kind: "MeshService", name: service }, to: [{ targetRef: { kind: "MeshService", name: service }, rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], default: {} }] }] } });
const limitOn = (name: string, targetRef: Record<string, unknown>) => policy({ type: "MeshRateLimit", mesh: "default", name, spec: { targetRef, to: [{ targetRef: { kind: "Mesh" }, default: { local: { http: { disabled: true } } } }] } });

/** A route context over a store holding only `mesh` (the Mesh resource, if any), with `held` decision records per dataplane. */
function contextWith({ mesh, held = {} }: { mesh?: Record<string, unknown>; held?: Record<string, string[]> } = {}): RouteContext {
  const decisionSamples = new DecisionSamples({ perDataplane: 100, maxBytes: 1 << 20 });
  for (const [name, ids] of Object.entries(held)) decisionSamples.add("default", name, ids.map((id) => JSON.stringify(allowedDecisionRecord(id))));
  const store = { getGlobal: (kind: string, name: string) => (kind === "Mesh" && name === mesh?.name ? mesh : undefined), list: () => [] };
  return { kumaVersion: DEFAULT_KUMA_VERSION, decisionSamples, store } as unknown as RouteContext;
}

const input = (p: Partial<WhatIfInput> & Pick<WhatIfInput, "candidate" | "dataplanes">): WhatIfInput => ({ mesh: "default", policies: [p.candidate], storedPolicies: [], examples: 1, ...p });
const names = (out: ReturnType<typeof whatIfOnSamples>) => out.map((d) => [d.name, d.selectedBy]);

test("what-if › given a candidate whose targetRef names a MeshHTTPRoute of the mesh, then the dataplanes the route selects are covered", (t) => {
  // Given route r on backend, and a rate limit on r as the candidate
  const r = route("r", "backend");
  const candidate = limitOn("m", { kind: "MeshHTTPRoute", name: "r" });
  // When its what-if is asked over a backend and a web dataplane
  const out = whatIfOnSamples(contextWith(), input({ candidate, policies: [r, candidate], dataplanes: [dp("backend-1"), dp("web-1", "web")] }));
  // Then backend-1 is covered, selected by the candidate
  t.deepEqual(names(out), [["backend-1", ["candidate"]]]);
});

test("what-if › given a stored version whose targetRef names a MeshHTTPRoute, then the dataplanes it selected through the route are covered as `stored`", (t) => {
  // Given a stored rate limit on route r (on backend), replaced by a candidate on web
  const r = route("r", "backend");
  const stored = limitOn("m", { kind: "MeshHTTPRoute", name: "r" });
  const candidate = limitOn("m", { kind: "MeshSubset", tags: { "kuma.io/service": "web" } });
  // When the what-if is asked
  const out = whatIfOnSamples(contextWith(), input({ candidate, stored, policies: [r, candidate], storedPolicies: [r, stored], dataplanes: [dp("backend-1"), dp("web-1", "web")] }));
  // Then backend-1 (the stored version's, through the route) and web-1 (the candidate's) are both covered
  t.deepEqual(names(out), [["backend-1", ["stored"]], ["web-1", ["candidate"]]]);
});

test("what-if › given dataplanes in no order, then the answer lists them by name", (t) => {
  // Given five selected dataplanes passed out of order
  const dataplanes = ["c-1", "a-1", "e-1", "b-1", "d-1"].map((n) => dp(n));
  // When a mesh-wide candidate's what-if is asked
  const out = whatIfOnSamples(contextWith(), input({ candidate: policy(mtp("p")), dataplanes }));
  // Then they come back sorted by name
  t.deepEqual(out.map((d) => d.name), ["a-1", "b-1", "c-1", "d-1", "e-1"]);
});

test("what-if › given a dataplane without samples, then its summary says none are held and why", (t) => {
  const out = whatIfOnSamples(contextWith(), input({ candidate: policy(mtp("p")), dataplanes: [dp("backend-1")] }));
  t.is(out[0]!.samples, 0);
  t.is(out[0]!.summary, "no decision samples held: its sidecar does not push them (--decision-log-push) or has not pushed yet");
});

test("what-if › given the mesh's Mesh resource with mTLS off, when a deny is replayed, then it does not apply (the replay reads the mesh's resources)", (t) => {
  // Given two allowed records held for backend-1, in a mesh whose stored Mesh has no mTLS
  const ctx = contextWith({ mesh: { type: "Mesh", name: "default" }, held: { "backend-1": ["r0", "r1"] } });
  // When a mesh-wide deny is replayed on them
  const [one] = whatIfOnSamples(ctx, input({ candidate: policy(mtp("deny-all", "Deny")), dataplanes: [dp("backend-1")] }));
  // Then nothing is denied: MeshTrafficPermission does not apply without mTLS
  t.like(one!.report, { records: 2, classes: { "allow (other deciding policy)": 2 } });
  t.false("allow→deny" in one!.report!.classes);
  t.regex(one!.report!.examples[0]!.after.reason ?? "", /mesh mTLS is off/);
});

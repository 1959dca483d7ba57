// The compiled snapshot's outbound plan (plans/compile.ts): which MeshHTTPRoute `to` entries apply to a kuma.io/service
// name, the order entries of several routes merge in, and when the previous snapshot's outbound plan is reused.
import test from "ava";
import { compile, routeTableFor } from "../../extproc/policy/plans/compile.js";
import { dataplaneFromTags } from "../../extproc/policy/documents/dataplane.js";
import type { MeshResources } from "../../extproc/policy/documents/resources.js";
import type { Policy, TargetRef } from "../../extproc/policy/model/types.js";

const dp = dataplaneFromTags("default", "kuma.io/service=web").dataplane!;

/** A MeshHTTPRoute on every proxy whose `to` entries each route GET /x with a header named after the route and entry. */
function route(name: string, ...refs: TargetRef[]): Policy {
  const to = refs.map((targetRef, i) => ({
    targetRef,
    rules: [{ matches: [{ path: { type: "Exact", value: "/x" } }], default: { filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "x-by", value: `${name}.to[${i}]` }] } }] } }],
  }));
  return { type: "MeshHTTPRoute", mesh: "default", name, displayName: name, labels: {}, role: "system", shadow: false, warnings: [], spec: { targetRef: { kind: "Mesh" }, ...(refs.length > 0 ? { to } : {}) } } as unknown as Policy;
}

/** Who decided the one merged rule towards `service`, and every contributing source in merge order. */
function towards(policies: Policy[], service: string): { by?: unknown; sources: string[] } {
  const table = routeTableFor(compile(policies, dp, 1).outbound, service);
  const rule = table.rules[0];
  return { by: rule?.default.filters?.[0]?.requestHeaderModifier?.set?.[0]?.value, sources: rule?.sources.map((s) => `${s.policy.name} ${s.rule}`) ?? [] };
}

test("given a route to the whole Mesh, when the table for any service name is built, then its entry applies", (t) => {
  t.deepEqual(towards([route("all", { kind: "Mesh" })], "orders"), { by: "all.to[0]", sources: ["all to[0].rules[0]"] });
});

test("given refs that name a service only with labels, a port or another kind, when the table for that kuma.io/service name is built, then none applies", (t) => {
  const refs: TargetRef[] = [
    { kind: "MeshService", name: "orders", labels: { app: "orders" } },
    { kind: "MeshService", name: "orders", sectionName: "http" },
    { kind: "MeshExternalService", name: "orders" },
  ];
  for (const ref of refs) t.deepEqual(towards([route("r", ref)], "orders"), { by: undefined, sources: [] }, JSON.stringify(ref));
  t.deepEqual(towards([route("r", { kind: "MeshService", name: "orders" })], "orders").by, "r.to[0]");
});

test("given a route without to entries, when compiled, then it adds no entries", (t) => {
  const plan = compile([route("empty")], dp, 1).outbound;
  t.is(plan.routes.length, 1);
  t.deepEqual([plan.meshEntries, plan.entries, [...plan.byService]], [[], [], []]);
});

test("given a lower-priority route to a service and a higher-priority one to the Mesh, when merged, then the higher one decides", (t) => {
  const policies = [route("a", { kind: "Mesh" }), route("b", { kind: "MeshService", name: "orders" })];
  const order = compile(policies, dp, 1).outbound.routes.map((p) => p.name);
  t.deepEqual(order, ["b", "a"], "a has the higher priority (same kind and role: the name decides)");
  t.deepEqual(towards(policies, "orders"), { by: "a.to[0]", sources: ["b to[0].rules[0]", "a to[0].rules[0]"] });
});

test("given one route whose later to entry is the Mesh one, when merged, then entries keep their to order and the later decides", (t) => {
  const policies = [route("r", { kind: "MeshService", name: "orders" }, { kind: "Mesh" })];
  t.deepEqual(towards(policies, "orders"), { by: "r.to[1]", sources: ["r to[0].rules[0]", "r to[1].rules[0]"] });
});

test("given a snapshot, when compiled again with the same routes and other resources, then the outbound plan is new; with the same ones, reused", (t) => {
  const policies = [route("r", { kind: "Mesh" })];
  const none: MeshResources = { meshes: [], services: [] };
  const first = compile(policies, dp, 1, { resources: none });
  t.is(compile(policies, dp, 2, { resources: { meshes: [], services: [] }, previous: first }).outbound, first.outbound);
  const other: MeshResources = { meshes: [{ kind: "Mesh", name: "default", labels: {}, mtlsEnabled: true }], services: [] };
  const second = compile(policies, dp, 2, { resources: other, previous: first });
  t.not(second.outbound, first.outbound);
  t.is(second.outbound.resources, other);
});

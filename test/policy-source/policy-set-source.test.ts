// A policy source on this dataplane's own set, in process: the same decisions as from the full lists, before and after an edit; a control plane without the feature (Kuma) is read through its lists and asked once.
import test from "ava";
import { dataplaneFromObject } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import type { MeshResources } from "../../extproc/policy/documents/resources.js";
import type { Policy } from "../../extproc/policy/model/types.js";
import { call, controlPlaneFor, eventually } from "../control-plane/helpers.js";
import { inboundFacts, sourceFor } from "./harness.js";
import { startFakeKuma } from "./fake-kuma.js";
import { dataplaneDoc, serviceMtp } from "./fixtures.js";

test("policy set › decisions from the per-dataplane set equal those from the full lists", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const doc = dataplaneDoc("a", "svc-a");
  await call(cp.url, "PUT", "/meshes/default/dataplanes/a", doc);
  const policies = [serviceMtp("on-a", "svc-a", "web"), serviceMtp("on-b", "svc-b", "orders"), { ...serviceMtp("mesh-wide", "x", "ops"), spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "MeshService", name: "ops" }, default: { action: "Allow" } }] } }];
  for (const p of policies) await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${p.name}`, p);
  const dp = dataplaneFromObject(doc).dataplane!;
  // given one source reading A's set and one reading the full lists, each feeding an engine for A
  const engines = { set: new PolicyEngine({ dataplane: dp, trustKumaTagsHeader: true }), lists: new PolicyEngine({ dataplane: dp, trustKumaTagsHeader: true }) };
  const applied = { set: [] as string[], lists: [] as string[] };
  const feed = (which: "set" | "lists") => (p: Policy[], _origin: string, r?: MeshResources) => {
    applied[which] = p.map((x) => x.name).sort();
    engines[which].replace(p, r);
  };
  const perDp = sourceFor(cp.url, { dataplane: () => dp, apply: feed("set") });
  const full = sourceFor(cp.url, { apply: feed("lists") });
  t.teardown(async () => {
    await perDp.source.stop();
    await full.source.stop();
  });
  await perDp.source.start();
  await full.source.start();
  const clients = ["web", "orders", "ops", "intruder"];
  const decisions = (e: PolicyEngine) => clients.map((c) => JSON.stringify(e.decide(inboundFacts(c))));
  // then the set path applied fewer policies (on-b does not select A) and decides the same for every client
  t.is(perDp.source.status.mode, "long-poll");
  t.deepEqual(applied.set, ["mesh-wide", "on-a"]);
  t.deepEqual(applied.lists, ["mesh-wide", "on-a", "on-b"]);
  t.deepEqual(decisions(engines.set), decisions(engines.lists));
  // and after an edit both follow to the same decisions
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/on-a", serviceMtp("on-a", "svc-a", "intruder"));
  t.true(await eventually(() => engines.set.decide(inboundFacts("intruder")).type === "continue" && engines.lists.decide(inboundFacts("intruder")).type === "continue", 5000));
  t.deepEqual(decisions(engines.set), decisions(engines.lists));
});

test("policy set › a control plane without the feature (Kuma) is read through its lists, asked once", async (t) => {
  const kuma = await startFakeKuma(2);
  kuma.items.set("meshtrafficpermissions", [serviceMtp("on-a", "svc-a", "web")]);
  const dp = dataplaneFromObject(dataplaneDoc("a", "svc-a")).dataplane!;
  const { source, names } = sourceFor(kuma.url, { dataplane: () => dp, pollIntervalMs: 100 });
  t.teardown(async () => {
    await source.stop();
    await kuma.close();
  });
  await source.start();
  t.deepEqual(names(), ["on-a"]);
  kuma.items.set("meshtrafficpermissions", [serviceMtp("on-a2", "svc-a", "web")]);
  t.true(await eventually(() => names().join() === "on-a2", 3000));
  t.is(kuma.requests.filter((r) => r === "GET /").length, 1, "the API root is asked once");
  t.false(kuma.requests.some((r) => r.includes("_policy-set")));
});

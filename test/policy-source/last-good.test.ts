// A control plane serving a bad new version of a policy never drops the good old one: the last good version
// stays in force (a Deny stays a Deny), a list of nothing but invalid items never empties the set, and every
// rejection is counted, listed (field paths) and kept visible for /explain.
import test from "ava";
import { dataplaneFromTags } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { explainHandler } from "../../extproc/policy/views/explain-route.js";
import { eventually, sleep } from "../control-plane/helpers.js";
import { startFakeKuma } from "./fake-kuma.js";
import { inboundFacts as facts, sourceFor } from "./harness.js";
import type { KumaVersion } from "../../extproc/policy/model/kuma-version.js";


const mtp = (name: string, action: string, client = "intruder") => ({
  type: "MeshTrafficPermission",
  mesh: "default",
  name,
  spec: { targetRef: { kind: "MeshService", name: "backend" }, from: [{ targetRef: { kind: "MeshService", name: client }, default: { action } }] },
});

/** Everyone may call everyone: without the Deny below, the intruder is allowed. */
const ALLOW_ALL = {
  type: "MeshTrafficPermission",
  mesh: "default",
  name: "allow-all",
  spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Allow" } }] },
};

async function setup(t: import("ava").ExecutionContext, kumaVersion?: KumaVersion) {
  const kuma = await startFakeKuma(100);
  const engine = new PolicyEngine({ dataplane: dataplaneFromTags("default", "kuma.io/service=backend", "backend-1").dataplane!, trustKumaTagsHeader: true, ...(kumaVersion ? { kumaVersion } : {}) });
  let names: string[] = [];
  const harness = sourceFor(kuma.url, {
    pollIntervalMs: 100,
    apply: (policies) => {
      names = policies.map((p) => p.name).sort();
      engine.replace(policies);
    },
  });
  t.teardown(async () => {
    await harness.source.stop();
    await kuma.close();
  });
  const syncs = async () => harness.metric("meshext_control_plane_sync_attempts_total");
  /** Waits for two more completed list rounds, so the fake's current items have been read. */
  const settle = async () => {
    const before = await syncs();
    t.true(await eventually(async () => (await syncs()) >= before + 2));
  };
  return { kuma, engine, ...harness, names: () => names, settle };
}

test("last-good › an invalid new version of a Deny policy keeps the Deny in force", async (t) => {
  const { kuma, engine, source, metric, settle } = await setup(t);
  // given a Deny for the intruder, applied
  kuma.items.set("meshtrafficpermissions", [mtp("deny-intruder", "Deny"), ALLOW_ALL]);
  await source.start();
  t.is(engine.decide(facts("intruder")).type, "respond");
  // when the control plane serves a new version of it that fails validation
  kuma.items.set("meshtrafficpermissions", [mtp("deny-intruder", "Dney"), ALLOW_ALL]);
  await settle();
  // then the intruder is still denied, and the rejection is counted and listed with its field path
  const decision = engine.decide(facts("intruder"));
  t.is(decision.type === "respond" ? decision.status : 0, 403);
  t.is(await metric("meshext_control_plane_rejected_policies"), 1);
  t.true((await metric("meshext_control_plane_rejected_policies_total")) >= 1);
  const [rejected] = source.rejected;
  t.is(rejected?.name, "deny-intruder");
  t.is(rejected?.kind, "MeshTrafficPermission");
  t.true(rejected?.keptLastGood);
  t.regex(JSON.stringify(rejected?.violations), /spec\.from\[0\]\.default\.action/);
  // and /explain shows it next to the decision
  const explained = explainHandler(engine, () => source.rejected)(JSON.stringify({ client: { tags: { "kuma.io/service": "intruder" } } }));
  t.is(explained.status, 200);
  t.like((explained.body as { rejected: unknown[] }).rejected[0], { kind: "MeshTrafficPermission", name: "deny-intruder", keptLastGood: true });
  // and a later valid version replaces it
  kuma.items.set("meshtrafficpermissions", [mtp("deny-intruder", "Allow"), ALLOW_ALL]);
  t.true(await eventually(() => engine.decide(facts("intruder")).type === "continue"));
  t.is(await metric("meshext_control_plane_rejected_policies"), 0);
  t.deepEqual(source.rejected, []);
});

test("last-good › a control plane serving only invalid items never empties the set", async (t) => {
  const { kuma, engine, source, names, settle, metric } = await setup(t);
  kuma.items.set("meshtrafficpermissions", [mtp("deny-intruder", "Deny")]);
  await source.start();
  t.deepEqual(names(), ["deny-intruder"]);
  // when every item served is invalid, even unidentifiable ones
  kuma.items.set("meshtrafficpermissions", [mtp("deny-intruder", "nope"), { type: "MeshTrafficPermission", spec: 42 }, "garbage"]);
  await settle();
  await sleep(50);
  // then the set in force is still the last good one
  t.deepEqual(names(), ["deny-intruder"]);
  t.is(engine.decide(facts("intruder")).type, "respond");
  t.is(await metric("meshext_control_plane_rejected_policies"), 3);
});

test("last-good › a policy deleted from the control plane goes away (keeping is only for rejected versions)", async (t) => {
  const { kuma, engine, source, names } = await setup(t);
  kuma.items.set("meshtrafficpermissions", [mtp("deny-intruder", "Deny"), ALLOW_ALL]);
  await source.start();
  t.is(engine.decide(facts("intruder")).type, "respond");
  kuma.items.set("meshtrafficpermissions", [ALLOW_ALL]);
  t.true(await eventually(() => names().length === 1));
  t.deepEqual(names(), ["allow-all"]);
  t.is(engine.decide(facts("intruder")).type, "continue");
});

test("last-good › a deletion and a rejection in the same update: the deleted policy goes, the rejected one keeps its last good version", async (t) => {
  // Kuma 2.13.0's semantics: from 2.13.1 and 2.14.0 on, Kuma groups these `from` items by clique (kumahq/kuma
  // #15412) and its RBAC allows a client any clique allows, so the Mesh-wide Allow lets both clients in.
  const { kuma, engine, source, names, settle } = await setup(t, "2.13");
  // given a Deny for the intruder, a Deny for the visitor, and allow-all, all applied
  kuma.items.set("meshtrafficpermissions", [mtp("deny-intruder", "Deny"), mtp("deny-visitor", "Deny", "visitor"), ALLOW_ALL]);
  await source.start();
  t.deepEqual(names(), ["allow-all", "deny-intruder", "deny-visitor"]);
  t.is(engine.decide(facts("visitor")).type, "respond");
  // when one update both deletes deny-visitor and serves an invalid new version of deny-intruder
  kuma.items.set("meshtrafficpermissions", [mtp("deny-intruder", "Dney"), ALLOW_ALL]);
  await settle();
  t.true(await eventually(() => names().length === 2));
  // then the deleted policy is gone and the rejected one stays in its last good version
  t.deepEqual(names(), ["allow-all", "deny-intruder"]);
  t.is(engine.decide(facts("visitor")).type, "continue");
  const intruder = engine.decide(facts("intruder"));
  t.is(intruder.type === "respond" ? intruder.status : 0, 403);
  t.deepEqual(source.rejected.map((r) => [r.name, r.keptLastGood]), [["deny-intruder", true]]);
  // and the next update without the rejected one deletes it too (nothing kept once it is gone upstream)
  kuma.items.set("meshtrafficpermissions", [ALLOW_ALL]);
  t.true(await eventually(() => names().length === 1));
  t.is(engine.decide(facts("intruder")).type, "continue");
});

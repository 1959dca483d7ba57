// What HttpPolicySource hands over and reports for a synced set: each policy's source URL, each rejected item's,
// a failing apply reported as a failed sync, and resync() applying the same set again.
import test from "ava";
import { sourceFor } from "./harness.js";
import { serviceMtp } from "./fixtures.js";
import { scriptedCp } from "./scripted-cp.js";

test("http source apply › given a synced policy, then it is applied with its URL on the control plane as its source", async (t) => {
  const cp = await scriptedCp(t);
  cp.items.set("meshtrafficpermissions", [serviceMtp("one", "backend", "web")]);
  const { source, applied } = sourceFor(cp.url);
  t.teardown(() => source.stop());
  await source.start();
  t.is(applied.at(-1)!.policies[0]!.source, `${cp.url}/meshes/default/MeshTrafficPermission/one`);
});

test("http source apply › given an invalid policy among valid ones, then it is reported rejected with its URL on the control plane", async (t) => {
  const cp = await scriptedCp(t);
  const broken = { ...serviceMtp("broken", "backend", "web"), spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "ALLOW" } }] } };
  cp.items.set("meshtrafficpermissions", [serviceMtp("good", "backend", "web"), broken]);
  const { source, names } = sourceFor(cp.url);
  t.teardown(() => source.stop());
  await source.start();
  t.deepEqual(names(), ["good"]);
  t.is(source.rejected.length, 1);
  t.like(source.rejected[0], { kind: "MeshTrafficPermission", name: "broken", source: `${cp.url}/meshes/default/MeshTrafficPermission/broken`, keptLastGood: false });
});

test("http source apply › given an engine that refuses the set (apply throws), then the sync fails with the error's message", async (t) => {
  const cp = await scriptedCp(t);
  const { source, metric } = sourceFor(cp.url, {
    apply: () => {
      throw new Error("engine refused the set");
    },
  });
  t.teardown(() => source.stop());
  await source.start();
  t.false(source.loaded);
  t.deepEqual(source.status.lastError, { reason: "network", message: "engine refused the set" });
  t.is(await metric("meshext_control_plane_sync_errors_total", { reason: "network" }), 1);
});

test("http source apply › given a synced set, when resync() is called with nothing changed, then the lists are read again and the same set is applied again", async (t) => {
  const cp = await scriptedCp(t);
  cp.items.set("meshtrafficpermissions", [serviceMtp("one", "backend", "web")]);
  const { source, applied } = sourceFor(cp.url);
  t.teardown(() => source.stop());
  await source.start();
  const listed = cp.of("list").length;
  await source.resync();
  t.is(applied.length, 2);
  t.deepEqual(applied[1]!.policies.map((p) => p.name), ["one"]);
  t.is(cp.of("list").length, 2 * listed);
});

// The control-plane policy source against the real embedded control plane on 127.0.0.1:0: long-poll follow,
// last good set when the control plane dies, cache on a cold start, per-policy rejection, metrics.
import test from "ava";
import { writeFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { call, eventually, mtp, startTestControlPlane, tempDir } from "../control-plane/helpers.js";
import { sourceFor } from "./harness.js";

test("http-source › follows a change made through the API in under a second with long-poll", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/first", mtp("first"));
  // The poll interval is a minute, so only the long-poll can explain a sub-second update.
  const { source, names, applied } = sourceFor(cp.url, { pollIntervalMs: 60_000 });
  t.teardown(async () => {
    await source.stop();
    await cp.stop();
    await dir.remove();
  });
  await source.start();
  t.true(source.loaded);
  t.deepEqual(names(), ["first"]);
  t.is(source.status.mode, "long-poll");
  await new Promise((r) => setTimeout(r, 200)); // the long-polls are now held
  const put = await call(cp.url, "PUT", "/meshes/default/meshfaultinjections/chaos", {
    type: "MeshFaultInjection",
    mesh: "default",
    name: "chaos",
    spec: {
      targetRef: { kind: "MeshService", name: "backend" },
      from: [{ targetRef: { kind: "Mesh" }, default: { http: [{ abort: { httpStatus: 503, percentage: 50 } }] } }],
    },
  });
  t.is(put.status, 201, JSON.stringify(put.body));
  const changedAt = Date.now(); // the change exists once the PUT is acknowledged (durably written)
  t.true(await eventually(() => names().includes("chaos")));
  const followedMs = Date.now() - changedAt;
  t.true(followedMs < 1000, `followed after ${followedMs}ms`);
  t.is(applied.at(-1)!.policies.length, 2);
});

test("http-source › the control plane dying mid-sync keeps the last good set; after restart nothing is lost", async (t) => {
  const dir = await tempDir();
  let cp = await startTestControlPlane(dir.path);
  const port = cp.address.port;
  for (const n of ["a", "b", "c"]) await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${n}`, mtp(n));
  const { source, names, applied, metric } = sourceFor(cp.url);
  t.teardown(async () => {
    await source.stop();
    await cp.stop();
    await dir.remove();
  });
  await source.start();
  t.deepEqual(names(), ["a", "b", "c"]);
  const appliedBefore = applied.length;
  await cp.stop(); // held long-polls are cut: the source sees failures
  t.true(await eventually(async () => (await metric("meshext_control_plane_sync_errors_total")) >= 2));
  t.is(applied.length, appliedBefore, "no empty or partial set was applied");
  t.deepEqual(names(), ["a", "b", "c"]);
  t.truthy(source.status.lastError);
  cp = await startTestControlPlane(dir.path, { listen: `127.0.0.1:${port}` });
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions")).body.total, 3, "store intact after restart");
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/d", mtp("d"));
  t.true(await eventually(() => names().includes("d")), "resumes syncing");
  t.deepEqual(names(), ["a", "b", "c", "d"]);
});

test("http-source › a sidecar started while the control plane is down decides with its cache file", async (t) => {
  const dir = await tempDir();
  const cacheFile = join(dir.path, "sidecar", "policy-cache.json");
  const cp = await startTestControlPlane(join(dir.path, "cp"));
  const port = cp.address.port;
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/cached", mtp("cached", "Deny"));
  const warm = sourceFor(cp.url, { cacheFile });
  await warm.source.start();
  t.true(await eventually(async () => (await readFile(cacheFile, "utf8").catch(() => "")).includes("cached")));
  await warm.source.stop();
  await cp.stop();

  const cold = sourceFor(`http://127.0.0.1:${port}`, { cacheFile });
  t.teardown(async () => {
    await cold.source.stop();
    await dir.remove();
  });
  await cold.source.start();
  t.true(cold.source.loaded);
  t.deepEqual(cold.names(), ["cached"]);
  t.regex(cold.applied[0]!.origin, /^cache:/);
  t.is(cold.applied[0]!.policies[0]!.spec.from![0]!.default!.action, "Deny");
  t.true((await cold.metric("meshext_control_plane_sync_errors_total", { reason: "network" })) >= 1);
});

test("http-source › without a control plane or a cache nothing is loaded (the sidecar answers per --before-first-sync)", async (t) => {
  const dir = await tempDir();
  const { source, applied } = sourceFor("http://127.0.0.1:9", { cacheFile: join(dir.path, "none.json") });
  t.teardown(async () => {
    await source.stop();
    await dir.remove();
  });
  await source.start();
  t.false(source.loaded);
  t.is(applied.length, 0);
});

test("http-source › invalid policies are rejected one by one and counted; the rest apply", async (t) => {
  const dir = await tempDir();
  // Written straight into the store's directory (as a person editing YAML would): PUT would refuse it.
  const mtpDir = join(dir.path, "meshes", "default", "meshtrafficpermissions");
  await mkdir(mtpDir, { recursive: true });
  await writeFile(join(mtpDir, "broken.yaml"), "type: MeshTrafficPermission\nmesh: default\nname: broken\nspec:\n  targetRef: {kind: Mesh}\n  from:\n    - targetRef: {kind: Mesh}\n      default: {action: ALLOW}\n");
  const cp = await startTestControlPlane(dir.path);
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/good", mtp("good"));
  const { source, names, metric } = sourceFor(cp.url);
  t.teardown(async () => {
    await source.stop();
    await cp.stop();
    await dir.remove();
  });
  await source.start();
  t.deepEqual(names(), ["good"]);
  t.is(await metric("meshext_control_plane_rejected_policies"), 1);
  t.is(await metric("meshext_control_plane_policies", { kind: "MeshTrafficPermission" }), 1);
  t.true((await metric("meshext_control_plane_last_sync_success_timestamp_seconds")) > 0);
});

test("http-source › a long-poll round that sees no change counts as a successful sync (the last-success time moves on)", async (t) => {
  // Given a control plane with one policy and a source whose long-polls are held for 200 ms
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/steady", mtp("steady"));
  const { source, applied, metric } = sourceFor(cp.url, { longPollWaitMs: 200 });
  t.teardown(async () => {
    await source.stop();
    await cp.stop();
    await dir.remove();
  });
  await source.start();
  t.is(source.status.mode, "long-poll");
  const firstSuccessS = await metric("meshext_control_plane_last_sync_success_timestamp_seconds");
  // When nothing changes for several long-poll rounds
  t.true(await eventually(async () => (await metric("meshext_control_plane_sync_attempts_total")) >= 4));
  // Then the last-success time is later than the first sync's, with no error and no new set applied
  t.true((await metric("meshext_control_plane_last_sync_success_timestamp_seconds")) > firstSuccessS);
  t.is(await metric("meshext_control_plane_sync_errors_total"), 0);
  t.is(applied.length, 1);
});

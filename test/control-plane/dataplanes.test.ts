// Dataplane lifecycle in the embedded control plane: online, draining, offline after missed heartbeats,
// gone after DELETE, garbage-collected after the offline age, and state kept across restarts.
import test from "ava";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { call, dataplane, eventually, startTestControlPlane, tempDir } from "./helpers.js";

const DP = "/meshes/default/dataplanes/backend-1";

test("dataplanes › PUT registers online, heartbeats report draining, GET shows state and last seen", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  t.is((await call(cp.url, "PUT", DP, dataplane("backend-1"))).status, 201);
  const online = await call(cp.url, "GET", DP);
  t.is(online.body.status.state, "online");
  t.truthy(Date.parse(online.body.status.lastSeenTime));
  t.is(online.body.networking.inbound[0].tags["kuma.io/service"], "backend");
  const hb = await call(cp.url, "POST", `${DP}/_heartbeat`, { state: "draining" });
  t.is(hb.status, 200);
  t.is(hb.body.status.state, "draining");
  const list = await call(cp.url, "GET", "/meshes/default/dataplanes");
  t.is(list.body.items[0].status.state, "draining");
});

test("dataplanes › a dataplane that stops heartbeating turns offline; a heartbeat brings it back", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path, { offlineTimeoutMs: 1000 });
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  await call(cp.url, "PUT", DP, dataplane("backend-1"));
  t.true(await eventually(async () => (await call(cp.url, "GET", DP)).body.status.state === "offline"));
  const back = await call(cp.url, "POST", `${DP}/_heartbeat`, {});
  t.is(back.body.status.state, "online");
});

test("dataplanes › DELETE (graceful deregistration) makes it disappear rather than linger offline", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  await call(cp.url, "PUT", DP, dataplane("backend-1"));
  t.is((await call(cp.url, "DELETE", DP)).status, 200);
  t.is((await call(cp.url, "GET", DP)).status, 404);
  t.is((await call(cp.url, "GET", "/meshes/default/dataplanes")).body.total, 0);
  t.is((await call(cp.url, "POST", `${DP}/_heartbeat`, {})).status, 404);
});

test("dataplanes › offline dataplanes are garbage-collected after the configured age", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path, { offlineTimeoutMs: 1000, offlineGcAgeMs: 2000 });
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  await call(cp.url, "PUT", DP, dataplane("backend-1"));
  await call(cp.url, "PUT", "/meshes/default/dataplanes/alive", dataplane("alive"));
  const beat = setInterval(() => void call(cp.url, "POST", "/meshes/default/dataplanes/alive/_heartbeat", {}).catch(() => {}), 100);
  t.teardown(() => clearInterval(beat));
  t.true(await eventually(async () => (await call(cp.url, "GET", DP)).status === 404, 15_000), "collected");
  t.is((await call(cp.url, "GET", "/meshes/default/dataplanes/alive")).body.status.state, "online");
});

test("dataplanes › an offline dataplane stays offline across a restart; an online one gets a fresh timeout", async (t) => {
  const dir = await tempDir();
  let cp = await startTestControlPlane(dir.path, { offlineTimeoutMs: 300 });
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  await call(cp.url, "PUT", DP, dataplane("backend-1"));
  t.true(await eventually(async () => (await call(cp.url, "GET", DP)).body.status.state === "offline"));
  const file = join(dir.path, "meshes", "default", "dataplanes", "backend-1.yaml");
  t.true(await eventually(async () => (await readFile(file, "utf8")).includes("state: offline")), "the sweep persisted the transition");
  await cp.stop();
  cp = await startTestControlPlane(dir.path, { offlineTimeoutMs: 60_000 });
  t.is((await call(cp.url, "GET", DP)).body.status.state, "offline");
  await call(cp.url, "PUT", "/meshes/default/dataplanes/fresh", dataplane("fresh"));
  await cp.stop();
  cp = await startTestControlPlane(dir.path, { offlineTimeoutMs: 60_000 });
  t.is((await call(cp.url, "GET", "/meshes/default/dataplanes/fresh")).body.status.state, "online");
});

test("dataplanes › an invalid Dataplane gets 400 with field paths", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const res = await call(cp.url, "PUT", DP, { type: "Dataplane", mesh: "default", name: "backend-1", networking: { inbound: [{ port: 70000, tags: {} }] } });
  t.is(res.status, 400);
  t.deepEqual(
    res.body.invalid_parameters.map((p: { field: string }) => p.field).sort(),
    ["networking.address", "networking.inbound[0].port", 'networking.inbound[0].tags["kuma.io/service"]'].sort(),
  );
});

// The control-plane policy source hands the engine the mesh's Mesh resource and its MeshService /
// MeshExternalService / MeshMultiZoneService resources with the policies: fetched, validated item by item,
// followed by long-poll, cached, and simply absent on a server that lacks those lists (Kuma before 2.7).
import test from "ava";
import { call, eventually, mtp, startTestControlPlane, tempDir } from "../control-plane/helpers.js";
import { startFakeKuma } from "./fake-kuma.js";
import { sourceFor } from "./harness.js";

const strictMesh = { type: "Mesh", name: "default", mtls: { enabledBackend: "ca-1", backends: [{ name: "ca-1", type: "builtin" }] } };
const orders = {
  type: "MeshService",
  mesh: "default",
  name: "orders",
  spec: { selector: { dataplaneTags: { "kuma.io/service": "orders" } }, ports: [{ port: 8080, name: "http", appProtocol: "http" }] },
};

test("mesh-resources › given a Mesh and a MeshService in the embedded control plane, when the source syncs, then both reach apply with the policies, and a new service arrives by long-poll", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  await call(cp.url, "PUT", "/meshes/default", strictMesh);
  await call(cp.url, "PUT", "/meshes/other", { ...strictMesh, name: "other" });
  await call(cp.url, "PUT", "/meshes/default/meshservices/orders", orders);
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/allow", mtp("allow"));
  const { source, applied } = sourceFor(cp.url);
  t.teardown(async () => {
    await source.stop();
    await cp.stop();
    await dir.remove();
  });
  await source.start();
  const first = applied.at(-1)!;
  t.deepEqual(first.policies.map((p) => p.name), ["allow"]);
  t.deepEqual(first.resources?.meshes.map((m) => m.name), ["default"], "only this mesh's Mesh");
  t.true(first.resources?.meshes[0]?.mtlsEnabled);
  t.deepEqual(first.resources?.services.map((s) => `${s.kind}/${s.name}`), ["MeshService/orders"]);
  t.deepEqual(first.resources?.services[0]?.ports, [{ port: 8080, name: "http", appProtocol: "http" }]);
  t.is(source.status.mode, "long-poll");

  const external = { type: "MeshExternalService", mesh: "default", name: "httpbin", spec: { match: { port: 443, protocol: "tcp" }, endpoints: [{ address: "httpbin.org", port: 443 }] } };
  await call(cp.url, "PUT", "/meshes/default/meshexternalservices/httpbin", external);
  t.true(await eventually(() => (applied.at(-1)?.resources?.services.length ?? 0) === 2));
  await call(cp.url, "DELETE", "/meshes/default");
  t.true(await eventually(() => applied.at(-1)?.resources?.meshes.length === 0), "a deleted Mesh leaves a bare implicit mesh: mTLS state unknown");
  await call(cp.url, "PUT", "/meshes/default", { type: "Mesh", name: "default" });
  t.true(await eventually(() => applied.at(-1)?.resources?.meshes[0]?.mtlsEnabled === false), "a stored Mesh without mtls: mTLS off");
});

test("mesh-resources › given a server that serves an invalid service resource, when the source syncs, then that one is rejected and counted while the rest apply", async (t) => {
  const kuma = await startFakeKuma();
  kuma.items.set("meshtrafficpermissions", [mtp("allow")]);
  kuma.items.set("meshservices", [orders, { ...orders, name: "broken", spec: { ports: [{ port: 0 }] } }]);
  const { source, applied, metric } = sourceFor(kuma.url);
  t.teardown(async () => {
    await source.stop();
    await kuma.close();
  });
  await source.start();
  t.deepEqual(applied.at(-1)!.resources?.services.map((s) => s.name), ["orders"]);
  t.deepEqual(applied.at(-1)!.policies.map((p) => p.name), ["allow"]);
  t.is(await metric("meshext_control_plane_rejected_policies"), 1);
});

test("mesh-resources › given a Kuma without the /meshes list or service lists (404), when the source syncs, then policies apply with no Mesh and no services", async (t) => {
  const kuma = await startFakeKuma();
  kuma.items.set("meshtrafficpermissions", [mtp("allow")]);
  const { source, applied } = sourceFor(kuma.url);
  t.teardown(async () => {
    await source.stop();
    await kuma.close();
  });
  await source.start();
  t.true(kuma.requests.some((r) => r.startsWith("GET /meshes?name=default")), "asked for the Mesh");
  t.deepEqual(applied.at(-1)!.policies.map((p) => p.name), ["allow"]);
  t.deepEqual(applied.at(-1)!.resources?.meshes, []);
  t.deepEqual(applied.at(-1)!.resources?.services, []);
});

test("mesh-resources › given a cache written while the control plane was up, when a new source starts with the control plane down, then the Mesh and services come back from the cache", async (t) => {
  const dir = await tempDir();
  const cacheFile = `${dir.path}/cache.json`;
  const cp = await startTestControlPlane(`${dir.path}/cp`);
  await call(cp.url, "PUT", "/meshes/default", strictMesh);
  await call(cp.url, "PUT", "/meshes/default/meshservices/orders", orders);
  const online = sourceFor(cp.url, { cacheFile });
  await online.source.start();
  await online.source.stop();
  const url = cp.url;
  await cp.stop();
  t.true(await eventually(async () => (await import("node:fs")).existsSync(cacheFile)));
  const offline = sourceFor(url, { cacheFile });
  t.teardown(async () => {
    await offline.source.stop();
    await dir.remove();
  });
  await offline.source.start();
  const last = offline.applied.at(-1)!;
  t.regex(last.origin, /^cache:/);
  t.true(last.resources?.meshes[0]?.mtlsEnabled);
  t.deepEqual(last.resources?.services.map((s) => s.name), ["orders"]);
});

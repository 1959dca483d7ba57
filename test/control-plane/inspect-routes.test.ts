// The inspect routes' own answers (control-plane/inspect-routes.ts, inspect-proxy-routes.ts) beside the goldens of
// inspect.test.ts: which paths are inspect endpoints, Kuma's 404/400 bodies, stored resources the engine cannot
// read (written under another --kuma-version), and the `next` link of a policy's dataplanes.
import test from "ava";
import { connect } from "node:net";
import { parseKumaVersion } from "../../extproc/policy/model/kuma-version.js";
import { call, controlPlaneFor, dataplane, mtp, startTestControlPlane, tempDir } from "./helpers.js";

const DP = "/meshes/default/dataplanes";
const exclusiveMesh = { type: "Mesh", name: "default", meshServices: { mode: "Exclusive" } };
/** A Dataplane whose inbound has no tags: Kuma 3.0 takes it, 2.14 does not. */
const tagless = { type: "Dataplane", mesh: "default", name: "dp-1", labels: { app: "orders" }, networking: { address: "10.0.0.7", inbound: [{ port: 8080, name: "main-port" }] } };
/** A MeshTrafficPermission in the `rules` form (Kuma 2.10+, and 3.0's only form). */
const modern = (name: string) => ({
  type: "MeshTrafficPermission",
  mesh: "default",
  name,
  spec: { targetRef: { kind: "Mesh" }, rules: [{ default: { allow: [{ spiffeID: { type: "Exact", value: "spiffe://default/web" } }] } }] },
});
const OUT = "kri_msvc_default___orders_http";
const ROUTE = "kri_mhttpr_default___r_";

test("proxy inspect › given paths that are not one of the per-proxy views, when read, then 404 `no such endpoint`", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default", exclusiveMesh);
  await call(cp.url, "PUT", `${DP}/dp-1`, dataplane("dp-1"));
  for (const rest of [
    "_policies/x",
    "_other",
    `_inbounds/${OUT}`,
    `_inbounds/${OUT}/_other`,
    `_other/${OUT}/_policies`,
    `_inbounds/${OUT}/_policies/x`,
    `_outbounds/${OUT}/_other`,
    `_other/${OUT}/_routes`,
    `_outbounds/${OUT}/_routes/${ROUTE}`,
    `_outbounds/${OUT}/_policies/x`,
    `_outbounds/${OUT}/_routes/${ROUTE}/_other`,
    `_other/${OUT}/_routes/${ROUTE}/_policies`,
    `_outbounds/${OUT}/_other/${ROUTE}/_policies`,
    `_outbounds/${OUT}/_routes/${ROUTE}/_policies/x`,
    `_inbounds/${OUT}/_routes/${ROUTE}/_policies`,
  ]) {
    const reply = await call(cp.url, "GET", `${DP}/dp-1/${rest}`);
    t.is(reply.status, 404, rest);
    t.is(reply.body.detail, `no such endpoint: ${DP}/dp-1/${rest}`, rest);
  }
  for (const rest of ["_policies", `_inbounds/kri_dp_default___dp-1_main-port/_policies`, `_outbounds/${OUT}/_routes`, `_outbounds/${OUT}/_policies`, `_outbounds/${OUT}/_routes/${ROUTE}/_policies`]) {
    t.not((await call(cp.url, "GET", `${DP}/dp-1/${rest}`)).status, 404, rest);
  }
});

test("proxy inspect › given a mesh without Exclusive MeshServices (or no Mesh at all), when a per-proxy view is read, then Kuma's 400", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", `${DP}/dp-1`, dataplane("dp-1"));
  for (const mesh of [undefined, { type: "Mesh", name: "default" }, { type: "Mesh", name: "default", meshServices: { mode: "Everywhere" } }]) {
    if (mesh) await call(cp.url, "PUT", "/meshes/default", mesh);
    const reply = await call(cp.url, "GET", `${DP}/dp-1/_policies`);
    t.is(reply.status, 400, JSON.stringify(mesh));
    t.is(reply.body.detail, "bad request: can't use _policies endpoint without meshService enabled");
  }
  const missingMesh = await call(cp.url, "GET", "/meshes/nowhere/dataplanes/dp-1/_policies");
  t.is(missingMesh.status, 404);
  t.like(missingMesh.body, { title: "Failed to retrieve Mesh", detail: "Not found" });
});

test("inspect › given a Dataplane stored under Kuma 3.0, when read under 3.0, then every view reads it; under 2.14, then 400 and left out of a policy's dataplanes", async (t) => {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const v30 = await startTestControlPlane(dir.path, { kumaVersion: parseKumaVersion("3.0") });
  let running = true;
  t.teardown(() => (running ? v30.stop() : undefined));
  await call(v30.url, "PUT", "/meshes/default", exclusiveMesh);
  t.is((await call(v30.url, "PUT", `${DP}/dp-1`, tagless)).status, 201);
  t.is((await call(v30.url, "PUT", "/meshes/default/meshtrafficpermissions/all", modern("all"))).status, 201);
  t.is((await call(v30.url, "GET", `${DP}/dp-1/_rules`)).status, 200);
  t.is((await call(v30.url, "GET", `${DP}/dp-1/_policies`)).status, 200, "the per-proxy views read it as the control plane's Kuma version does");
  t.is((await call(v30.url, "GET", "/meshes/default/meshtrafficpermissions/all/_resources/dataplanes")).body.total, 1);
  await v30.stop();
  running = false;
  const v214 = await startTestControlPlane(dir.path);
  t.teardown(() => v214.stop());
  for (const view of ["_rules", "_policies"]) {
    const reply = await call(v214.url, "GET", `${DP}/dp-1/${view}`);
    t.is(reply.status, 400, view);
    t.like(reply.body, { title: "Could not process a resource", detail: "Dataplane default/dp-1 cannot be read by the policy engine" }, view);
  }
  await call(v214.url, "PUT", `${DP}/dp-2`, dataplane("dp-2"));
  const selected = await call(v214.url, "GET", "/meshes/default/meshtrafficpermissions/all/_resources/dataplanes");
  t.is(selected.status, 200);
  t.deepEqual(selected.body.items.map((i: { name: string }) => i.name), ["dp-2"]);
});

test("inspect › given a policy stored under 2.14 that Kuma 2.6 refuses, when read under 2.6, then its dataplanes are 400 naming it and the rules leave it out", async (t) => {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const v214 = await startTestControlPlane(dir.path);
  let running = true;
  t.teardown(() => (running ? v214.stop() : undefined));
  t.is((await call(v214.url, "PUT", "/meshes/default/meshtrafficpermissions/modern", modern("modern"))).status, 201);
  await call(v214.url, "PUT", "/meshes/default/meshtrafficpermissions/legacy", mtp("legacy"));
  await call(v214.url, "PUT", `${DP}/dp-1`, dataplane("dp-1"));
  await v214.stop();
  running = false;
  const v26 = await startTestControlPlane(dir.path, { kumaVersion: parseKumaVersion("2.6") });
  t.teardown(() => v26.stop());
  const refused = await call(v26.url, "GET", "/meshes/default/meshtrafficpermissions/modern/_resources/dataplanes");
  t.is(refused.status, 400);
  t.like(refused.body, { title: "Could not process a resource", detail: "stored MeshTrafficPermission default/modern is not valid" });
  t.true(refused.body.invalid_parameters.length > 0);
  const rules = await call(v26.url, "GET", `${DP}/dp-1/_rules`);
  t.is(rules.status, 200);
  t.false(JSON.stringify(rules.body).includes("modern"), "the invalid policy is left out");
  t.true(JSON.stringify(rules.body).includes("legacy"));
  const missing = await call(v26.url, "GET", "/meshes/nowhere/meshtrafficpermissions/legacy/_resources/dataplanes");
  t.is(missing.status, 404);
  t.like(missing.body, { title: "Failed to retrieve Mesh", detail: "Not found" });
});

test("policy dataplanes › given exactly one page of matches, when listed, then no next link; one more match, then next names the following offset", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/all", mtp("all"));
  for (const n of ["dp-1", "dp-2"]) await call(cp.url, "PUT", `${DP}/${n}`, dataplane(n));
  const path = "/meshes/default/meshtrafficpermissions/all/_resources/dataplanes";
  const whole = await call(cp.url, "GET", `${path}?size=2`);
  t.is(whole.body.total, 2);
  t.is(whole.body.items.length, 2);
  t.is(whole.body.next, undefined);
  await call(cp.url, "PUT", `${DP}/dp-3`, dataplane("dp-3"));
  const first = await call(cp.url, "GET", `${path}?size=2`);
  t.is(first.body.total, 3);
  t.is(new URL(first.body.next).searchParams.get("offset"), "2");
  t.is(new URL(first.body.next).host, new URL(cp.url).host);
});

/** One HTTP/1.0 GET of `path` with no Host header; the status and the body the server sends before it closes. */
function hostlessGet(base: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(`GET ${path} HTTP/1.0\r\n\r\n`));
    let text = "";
    socket.setEncoding("utf8").on("data", (c: string) => (text += c));
    socket.on("error", reject);
    socket.on("end", () => resolve({ status: Number(text.split(" ")[1]), body: text.slice(text.indexOf("\r\n\r\n") + 4) }));
  });
}

test("policy dataplanes › given a request with no Host header, when a page has a next one, then next names localhost", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/all", mtp("all"));
  for (const n of ["dp-1", "dp-2"]) await call(cp.url, "PUT", `${DP}/${n}`, dataplane(n));

  const reply = await hostlessGet(cp.url, "/meshes/default/meshtrafficpermissions/all/_resources/dataplanes?size=1");

  t.is(reply.status, 200, reply.body);
  t.is(JSON.parse(reply.body).next, "http://localhost/meshes/default/meshtrafficpermissions/all/_resources/dataplanes?size=1&offset=1");
});

test("policy dataplanes › given a policy whose targetRef is a MeshHTTPRoute, when its dataplanes are read, then they are those the route selects", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const [name, service] of [["dp-a", "svc-a"], ["dp-b", "svc-b"]] as const) await call(cp.url, "PUT", `${DP}/${name}`, dataplane(name, service));
  const route = { type: "MeshHTTPRoute", mesh: "default", name: "r", spec: { targetRef: { kind: "MeshService", name: "svc-a" }, to: [{ targetRef: { kind: "MeshService", name: "svc-b" }, rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], default: {} }] }] } };
  t.is((await call(cp.url, "PUT", "/meshes/default/meshhttproutes/r", route)).status, 201);
  const limit = { type: "MeshRateLimit", mesh: "default", name: "on-r", spec: { targetRef: { kind: "MeshHTTPRoute", name: "r" }, to: [{ targetRef: { kind: "Mesh" }, default: { local: { http: { requestRate: { num: 1, interval: "1s" } } } } }] } };
  t.is((await call(cp.url, "PUT", "/meshes/default/meshratelimits/on-r", limit)).status, 201);

  const selected = await call(cp.url, "GET", "/meshes/default/meshratelimits/on-r/_resources/dataplanes");

  t.is(selected.status, 200);
  t.deepEqual(selected.body.items.map((i: { name: string }) => i.name), ["dp-a"]);
});

// The embedded control plane's Mesh (with mTLS state) and MeshService / MeshExternalService /
// MeshMultiZoneService resources: validated with Kuma's field paths, stored durably, listed and paged,
// long-pollable, described in /_resources, and reported API root version.
import test from "ava";
import { call, controlPlaneFor, startTestControlPlane, tempDir } from "./helpers.js";


const strictMesh = (name = "default") => ({ type: "Mesh", name, mtls: { enabledBackend: "ca-1", backends: [{ name: "ca-1", type: "builtin" }] } });

const meshService = (name: string, port = 8080) => ({
  type: "MeshService",
  mesh: "default",
  name,
  labels: { "kuma.io/display-name": name },
  spec: { selector: { dataplaneTags: { "kuma.io/service": name } }, ports: [{ port, targetPort: port, appProtocol: "http", name: "http" }] },
});

test("mesh › given a Mesh with mTLS, when it is PUT, then GET /meshes/{name} and the /meshes list serve it with its mtls", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const put = await call(cp.url, "PUT", "/meshes/default", strictMesh());
  t.is(put.status, 201);
  const got = await call(cp.url, "GET", "/meshes/default");
  t.is(got.status, 200);
  t.deepEqual(got.body.mtls, strictMesh().mtls);
  t.truthy(Date.parse(got.body.creationTime));
  const list = await call(cp.url, "GET", "/meshes");
  t.is(list.body.total, 1);
  t.deepEqual(list.body.items[0].mtls, strictMesh().mtls);
  t.truthy(list.headers.get("etag"));
});

test("mesh › given a Mesh that survives a restart, when the control plane starts again, then it still serves the Mesh", async (t) => {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const first = await startTestControlPlane(dir.path);
  await call(first.url, "PUT", "/meshes/payments", strictMesh("payments"));
  await call(first.url, "PUT", "/meshes/payments/meshservices/orders", { ...meshService("orders"), mesh: "payments" });
  await first.stop();
  const second = await startTestControlPlane(dir.path);
  t.teardown(() => second.stop());
  t.deepEqual((await call(second.url, "GET", "/meshes/payments")).body.mtls, strictMesh().mtls);
  t.is((await call(second.url, "GET", "/meshes/payments/meshservices/orders")).status, 200);
});

test("mesh › given an invalid Mesh, when it is PUT, then 400 lists every violation with Kuma's field paths and nothing is stored", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const bad = await call(cp.url, "PUT", "/meshes/default", {
    type: "Mesh",
    name: "default",
    mtls: { enabledBackend: "ca-2", backends: [{ name: "ca-1", type: "builtin" }, { name: "ca-1", type: "magic", mode: "LOOSE" }] },
    meshServices: { mode: "Sometimes" },
  });
  t.is(bad.status, 400);
  const fields = bad.body.invalid_parameters.map((p: { field: string }) => p.field).sort();
  t.deepEqual(fields, ["meshServices.mode", "mtls.backends", "mtls.backends[1].mode", "mtls.backends[1].name", "mtls.backends[1].type", "mtls.enabledBackend"]);
  const got = await call(cp.url, "GET", "/meshes/default");
  t.is(got.status, 200);
  t.is(got.body.mtls, undefined, "the implicit default mesh is unchanged");
});

test("mesh › given a stored Mesh, when it is deleted, then the mesh falls back to the bare implicit one and a second DELETE is 404", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default", strictMesh());
  t.is((await call(cp.url, "DELETE", "/meshes/default")).status, 200);
  t.deepEqual((await call(cp.url, "GET", "/meshes/default")).body, { type: "Mesh", name: "default" });
  t.is((await call(cp.url, "DELETE", "/meshes/default")).status, 404);
});

test("services › given the three service kinds, when each is PUT, then each lists, pages and GETs in Kuma's universal shape", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const n of ["c", "a", "b"]) t.is((await call(cp.url, "PUT", `/meshes/default/meshservices/${n}`, meshService(n))).status, 201);
  const external = {
    type: "MeshExternalService",
    mesh: "default",
    name: "httpbin",
    spec: { match: { type: "HostnameGenerator", port: 80, protocol: "http" }, endpoints: [{ address: "httpbin.org", port: 80 }] },
  };
  t.is((await call(cp.url, "PUT", "/meshes/default/meshexternalservices/httpbin", external)).status, 201);
  const multi = { type: "MeshMultiZoneService", mesh: "default", name: "orders-all", spec: { selector: { meshService: { matchLabels: { app: "orders" } } }, ports: [{ port: 8080, appProtocol: "http" }] } };
  t.is((await call(cp.url, "PUT", "/meshes/default/meshmultizoneservices/orders-all", multi)).status, 201);

  const page = await call(cp.url, "GET", "/meshes/default/meshservices?size=2");
  t.is(page.body.total, 3);
  t.deepEqual(page.body.items.map((i: { name: string }) => i.name), ["a", "b"]);
  t.regex(page.body.next, /offset=2/);
  t.is((await call(cp.url, "GET", "/meshexternalservices")).body.items[0].spec.endpoints[0].address, "httpbin.org");
  t.is((await call(cp.url, "GET", "/meshes/default/meshmultizoneservices/orders-all")).body.spec.ports[0].port, 8080);
});

test("services › given invalid service resources, when they are PUT, then 400 names Kuma's field paths for each", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const ms = await call(cp.url, "PUT", "/meshes/default/meshservices/orders", {
    ...meshService("orders"),
    spec: { selector: { dataplaneTags: { app: "orders" }, dataplaneRef: { name: "dp-1" } }, ports: [{ port: 70000, appProtocol: "smtp" }] },
  });
  t.is(ms.status, 400);
  t.deepEqual(ms.body.invalid_parameters.map((p: { field: string }) => p.field).sort(), ["spec.ports[0].appProtocol", "spec.ports[0].port", "spec.selector"]);
  const mes = await call(cp.url, "PUT", "/meshes/default/meshexternalservices/x", {
    type: "MeshExternalService",
    mesh: "default",
    name: "x",
    spec: { match: { type: "Other", port: 0, protocol: "udp" }, endpoints: [{ address: "not a host!", port: 80 }] },
  });
  t.deepEqual(mes.body.invalid_parameters.map((p: { field: string }) => p.field).sort(), ["spec.endpoints[0].address", "spec.match.port", "spec.match.protocol", "spec.match.type"]);
  const mzs = await call(cp.url, "PUT", "/meshes/default/meshmultizoneservices/y", { type: "MeshMultiZoneService", mesh: "default", name: "y", spec: { selector: { meshService: {} }, ports: [] } });
  t.deepEqual(mzs.body.invalid_parameters.map((p: { field: string; reason: string }) => `${p.field}: ${p.reason}`).sort(), [
    "spec.ports: cannot be empty",
    "spec.selector.meshService.matchLabels: cannot be empty",
  ]);
  t.is((await call(cp.url, "GET", "/meshes/default/meshservices")).body.total, 0);
});

test("services › given a long-poll on the MeshService list, when a MeshService is PUT, then the poll answers with the new list", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const first = await call(cp.url, "GET", "/meshes/default/meshservices");
  const etag = first.headers.get("etag")!;
  const started = Date.now();
  const poll = call(cp.url, "GET", "/meshes/default/meshservices?wait=10s", undefined, { "if-none-match": etag });
  await new Promise((r) => setTimeout(r, 100));
  await call(cp.url, "PUT", "/meshes/default/meshservices/orders", meshService("orders"));
  const changed = await poll;
  t.is(changed.status, 200);
  t.is(changed.body.items[0].name, "orders");
  t.true(Date.now() - started < 5000, "answered on the change, not at the end of the wait");
});

test("discovery › given the discovery endpoint, when /_resources is read, then every type is described as Kuma 2.14 does, sorted by name", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const res = await call(cp.url, "GET", "/_resources");
  const names = res.body.resources.map((r: { name: string }) => r.name);
  t.deepEqual(names, [...names].sort());
  for (const n of ["Mesh", "MeshService", "MeshExternalService", "MeshMultiZoneService", "MeshTrafficPermission", "Dataplane"]) t.true(names.includes(n), n);
  const byName = (n: string) => res.body.resources.find((r: { name: string }) => r.name === n);
  t.deepEqual(byName("MeshService"), {
    name: "MeshService",
    scope: "Mesh",
    readOnly: false,
    path: "meshservices",
    shortName: "msvc",
    singularDisplayName: "Mesh Service",
    pluralDisplayName: "Mesh Services",
    includeInFederation: false,
  });
  t.is(byName("Mesh").scope, "Global");
  t.deepEqual(byName("MeshRateLimit").policy, { isTargetRef: true, hasToTargetRef: true, hasFromTargetRef: true, hasRulesTargetRef: true, isFromAsRules: true });
});

test("discovery › given the API root, when GET / is read, then it reports the Kuma version it emulates as basedOnKuma (2.14 by default, or the pinned one)", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const root = await call(cp.url, "GET", "/");
  t.is(root.body.product, "meshext");
  t.is(root.body.basedOnKuma, "2.14.3");
  for (const k of ["hostname", "version", "instanceId", "clusterId", "gui"]) t.is(typeof root.body[k], "string", k);
  const { cp: old } = await controlPlaneFor(t, { kumaVersion: "2.6" });
  t.is((await call(old.url, "GET", "/")).body.basedOnKuma, "2.6.0");
});

test("discovery › given a policy with deprecated Kuma fields, when it is PUT, then it is stored and the answer carries Kuma's warnings", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const legacy = {
    type: "MeshTrafficPermission",
    mesh: "default",
    name: "legacy",
    spec: { targetRef: { kind: "MeshService", name: "orders" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Allow" } }] },
  };
  const put = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/legacy", legacy);
  t.is(put.status, 201);
  t.true(Array.isArray(put.body.warnings) && put.body.warnings.length > 0, JSON.stringify(put.body));
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/legacy")).body.warnings, undefined, "warnings are not stored");
  const modern = { ...legacy, name: "modern", spec: { targetRef: { kind: "Dataplane", labels: { app: "orders" } }, rules: [{ default: { allow: [{ spiffeID: { type: "Exact", value: "spiffe://default/web" } }] } }] } };
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/modern", modern)).body.warnings, undefined);
});

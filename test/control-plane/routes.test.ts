// The REST router (control-plane/routes.ts): which path and method reach which endpoint, the problems it answers
// otherwise (404 / 405 with Allow / 400 / 401), the token check, the API root and /_resources, PUT/GET/DELETE
// of mesh resources and Dataplanes, and the heartbeat's body.
import test from "ava";
import { hostname } from "node:os";
import { POLICY_SET_FEATURE } from "../../extproc/kuma-rest/features.js";
import { call, controlPlaneFor, dataplane, eventually, mtp } from "./helpers.js";

const MTP = "/meshes/default/meshtrafficpermissions";
const DP = "/meshes/default/dataplanes";

test("root › given the API root, when GET / is read, then it names meshext, its version and host, and lists the policy-set feature", async (t) => {
  const { cp } = await controlPlaneFor(t, { version: "9.8.7" });
  const root = await call(cp.url, "GET", "/");
  t.is(root.status, 200);
  t.deepEqual(root.body, {
    hostname: hostname(),
    product: "meshext",
    version: "9.8.7",
    basedOnKuma: "2.14.3",
    instanceId: `meshext-${hostname()}`,
    clusterId: "",
    gui: "",
    tagline: "meshext embedded control plane",
    features: [POLICY_SET_FEATURE],
  });
});

test("root › given the API root and /_resources, when written to, then 405 allowing only GET", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const path of ["/", "/_resources"]) {
    for (const method of ["PUT", "POST", "DELETE"]) {
      const reply = await call(cp.url, method, path, {});
      t.is(reply.status, 405, `${method} ${path}`);
      t.is(reply.headers.get("allow"), "GET", `${method} ${path}`);
      t.is(reply.body.detail, `method ${method} is not allowed on ${path}`);
    }
  }
});

test("discovery › given /_resources, when read, then every type is writable, with its plural as path, Mesh-scoped or Global, sorted by name", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const res = await call(cp.url, "GET", "/_resources/");
  t.is(res.status, 200);
  const resources: Array<{ name: string; scope: string; readOnly: boolean; path: string; policy?: unknown }> = res.body.resources;
  const names = resources.map((r) => r.name);
  t.deepEqual(names, [...names].sort());
  t.is(new Set(names).size, names.length, "each type once");
  for (const r of resources) t.false(r.readOnly, r.name);
  const byName = (n: string) => resources.find((r) => r.name === n)!;
  t.like(byName("MeshTrafficPermission"), { scope: "Mesh", path: "meshtrafficpermissions" });
  t.like(byName("Dataplane"), { scope: "Mesh", path: "dataplanes" });
  t.like(byName("ContainerPatch"), { scope: "Global", path: "containerpatches" });
  t.like(byName("Mesh"), { scope: "Global", path: "meshes" });
  t.is(byName("Dataplane").policy, undefined, "no policy key on a non-policy type");
  t.is(byName("MeshService").policy, undefined);
  t.truthy(byName("MeshTrafficPermission").policy);
});

test("paths › given trailing slashes, when a list or a resource is read, then they are ignored", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", `${MTP}/p`, mtp("p"));
  t.is((await call(cp.url, "GET", `${MTP}/p/`)).body.name, "p");
  t.is((await call(cp.url, "GET", `${MTP}//`)).body.total, 1);
  t.is((await call(cp.url, "GET", "/meshtrafficpermissions/")).body.total, 1);
});

test("paths › given a mesh-scoped path naming a global type, when read, then 404 says where the global type lives", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const path of ["/meshes/default/containerpatches", "/meshes/default/containerpatches/p", "/meshes/default/meshes/default"]) {
    const reply = await call(cp.url, "GET", path);
    t.is(reply.status, 404, path);
    t.regex(reply.body.detail, /is global, outside any mesh: use \/(containerpatches|meshes)$/, path);
  }
  t.is((await call(cp.url, "GET", "/meshes/default/containerpatches")).body.detail, "ContainerPatch is global, outside any mesh: use /containerpatches");
});

test("paths › given an unknown type or sub-path, when read, then 404 names the path", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", `${MTP}/p`, mtp("p"));
  await call(cp.url, "PUT", `${DP}/dp-1`, dataplane("dp-1"));
  t.is((await call(cp.url, "GET", "/meshes/default/meshwhatever/x")).body.detail, "no resource type at /meshes/default/meshwhatever/x");
  const cases = [
    "/nothing",
    "/containerpatches/p/extra",
    "/meshtrafficpermissions/p",
    "/default/meshtrafficpermissions",
    `${MTP}/p/_heartbeat`,
    `${MTP}/p/_rules`,
    `${MTP}/p/_policy-set`,
    `${MTP}/p/_decision-samples`,
    `${MTP}/p/_policies`,
    `${MTP}/p/_resources`,
    `${MTP}/p/_resources/meshes`,
    `${MTP}/p/other/dataplanes`,
    `${MTP}/p/_resources/dataplanes/x`,
    `${DP}/dp-1/_resources/dataplanes`,
    "/meshes/default/meshservices/s/_resources/dataplanes",
    `${DP}/dp-1/_unknown`,
    `${DP}/dp-1/_heartbeat/x`,
    `${DP}/dp-1/_rules/x`,
    `${DP}/dp-1/_policy-set/x`,
    `${DP}/dp-1/_decision-samples/x`,
    `${DP}/dp-1/x/_heartbeat`,
    `${DP}/dp-1/x/_rules`,
    `${DP}/dp-1/x/_policy-set`,
    `${DP}/dp-1/x/_decision-samples`,
    "/_resources/dataplanes",
  ];
  for (const path of cases) {
    for (const method of ["GET", "POST"]) {
      const reply = await call(cp.url, method, path, method === "POST" ? {} : undefined);
      t.is(reply.status, 404, `${method} ${path}`);
      t.is(reply.body.detail, `no such endpoint: ${path}`, `${method} ${path}`);
    }
  }
});

test("methods › given each endpoint, when called with a method it does not serve, then 405 with the methods it allows", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", `${MTP}/p`, mtp("p"));
  await call(cp.url, "PUT", `${DP}/dp-1`, dataplane("dp-1"));
  const cases: Array<[string, string, string]> = [
    ["PUT", "/meshtrafficpermissions", "GET"],
    ["DELETE", "/dataplanes", "GET"],
    ["PUT", MTP, "GET"],
    ["POST", MTP, "GET"],
    ["POST", `${MTP}/p`, "GET, PUT, DELETE"],
    ["PATCH", `${MTP}/p`, "GET, PUT, DELETE"],
    ["GET", `${DP}/dp-1/_heartbeat`, "POST"],
    ["PUT", `${DP}/dp-1/_heartbeat`, "POST"],
    ["GET", `${DP}/dp-1/_decision-samples`, "POST"],
    ["POST", `${DP}/dp-1/_rules`, "GET"],
    ["POST", `${DP}/dp-1/_policy-set`, "GET"],
    ["POST", `${DP}/dp-1/_policies`, "GET"],
    ["DELETE", `${MTP}/p/_resources/dataplanes`, "GET"],
  ];
  for (const [method, path, allow] of cases) {
    const reply = await call(cp.url, method, path, method === "GET" ? undefined : {});
    t.is(reply.status, 405, `${method} ${path}`);
    t.is(reply.headers.get("allow"), allow, `${method} ${path}`);
    t.is(reply.body.detail, `method ${method} is not allowed on ${path}`);
  }
});

test("methods › given a dataplane, when its sub-resources are called with their methods, then each endpoint answers", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", `${MTP}/p`, mtp("p"));
  t.is((await call(cp.url, "PUT", `${DP}/dp-1`, dataplane("dp-1"))).status, 201);
  t.is((await call(cp.url, "POST", `${DP}/dp-1/_heartbeat`, {})).body.name, "dp-1");
  t.is((await call(cp.url, "POST", `${DP}/dp-1/_decision-samples`, { records: [] })).status, 200);
  t.is((await call(cp.url, "GET", `${DP}/dp-1/_rules`)).status, 200);
  const set = await call(cp.url, "GET", `${DP}/dp-1/_policy-set`);
  t.is(set.status, 200);
  t.truthy(set.headers.get("etag"));
  t.is((await call(cp.url, "GET", `${DP}/dp-1/_policies`)).status, 400, "a mesh without exclusive MeshServices: Kuma's 400");
  const selected = await call(cp.url, "GET", `${MTP}/p/_resources/dataplanes`);
  t.is(selected.status, 200);
  t.is(selected.body.total, 1);
});

test("token › given a token, when writes carry it in various forms, then only `Bearer <token>` (surrounding spaces trimmed) is accepted", async (t) => {
  const { cp } = await controlPlaneFor(t, { token: "s3cret" });
  const put = (authorization?: string) => call(cp.url, "PUT", `${MTP}/p`, mtp("p"), authorization === undefined ? {} : { authorization });
  for (const bad of ["s3cret", "bearer s3cret", "Basic s3cret", "Bearer s3creT", "Bearer s3cre", "Bearer s3crett", "Bearer ", "Bearers3cret", "Bearer Bearer s3cret"]) {
    const reply = await put(bad);
    t.is(reply.status, 401, bad);
    t.is(reply.headers.get("www-authenticate"), 'Bearer realm="meshext-control-plane"');
  }
  t.is((await put("Bearer  s3cret  ")).status, 201);
  t.is((await put("Bearer s3cret")).status, 200);
  // reads need no token, and a method no endpoint serves is a 405 before any token question
  t.is((await call(cp.url, "GET", `${MTP}/p`)).status, 200);
  t.is((await call(cp.url, "PATCH", `${MTP}/p`, {})).status, 405);
  t.is((await call(cp.url, "POST", "/", {})).status, 401);
});

test("token › given no token, when writing without Authorization, then the writes land", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.is((await call(cp.url, "PUT", `${MTP}/p`, mtp("p"))).status, 201);
  t.is((await call(cp.url, "PUT", `${MTP}/p`, mtp("p"), { authorization: "Bearer whatever" })).status, 200);
  t.is((await call(cp.url, "DELETE", `${MTP}/p`)).status, 200);
});

test("resources › given a missing resource, when it is read or deleted, then 404 names its kind, mesh and name", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const method of ["GET", "DELETE"]) {
    const reply = await call(cp.url, method, `${MTP}/nope`);
    t.is(reply.status, 404, method);
    t.is(reply.body.detail, "MeshTrafficPermission default/nope not found", method);
    const dp = await call(cp.url, method, `${DP}/nope`);
    t.is(dp.status, 404, method);
    t.is(dp.body.detail, "Dataplane default/nope not found", method);
  }
});

test("resources › given a stored policy, when it is read by name, then it comes back as stored, with no dataplane status", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const put = await call(cp.url, "PUT", `${MTP}/p`, mtp("p"));

  const got = await call(cp.url, "GET", `${MTP}/p`);

  const { warnings: _warnings, ...stored } = put.body;
  t.is(got.status, 200);
  t.deepEqual(got.body, stored);
  t.is(got.body.status, undefined);
});

test("resources › given a bad mesh or name in the URL, when PUT, then 400 names the path part and nothing is stored", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const badMesh = await call(cp.url, "PUT", "/meshes/-bad/meshtrafficpermissions/p", mtp("p", "Allow", "-bad"));
  t.is(badMesh.status, 400);
  t.is(badMesh.body.detail, "invalid mesh or name in the URL");
  t.deepEqual(badMesh.body.invalid_parameters.map((p: { field: string }) => p.field), ["mesh"]);
  const badName = await call(cp.url, "PUT", `${MTP}/${encodeURIComponent("a/b")}`, mtp("a/b"));
  t.is(badName.status, 400);
  t.is(badName.body.detail, "invalid mesh or name in the URL");
  t.deepEqual(badName.body.invalid_parameters.map((p: { field: string }) => p.field), ["name"]);
  t.is((await call(cp.url, "GET", "/meshtrafficpermissions")).body.total, 0);
});

test("resources › given server-owned times in a PUT body, when stored, then the server's own times are kept", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const old = "2001-01-01T00:00:00Z";
  const put = await call(cp.url, "PUT", `${MTP}/p`, { ...mtp("p"), creationTime: old, modificationTime: old });
  t.is(put.status, 201);
  t.not(put.body.creationTime, old);
  t.not(put.body.modificationTime, old);
  const got = await call(cp.url, "GET", `${MTP}/p`);
  t.not(got.body.creationTime, old);
  t.not(got.body.modificationTime, old);
  t.is(got.body.type, "MeshTrafficPermission");
  t.is(got.body.mesh, "default");
  t.is(got.body.name, "p");
});

test("dataplanes › given a dataplane that heartbeats, when it is read one by one and in both lists, then each shows the heartbeat's live status", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const put = await call(cp.url, "PUT", `${DP}/dp-1`, dataplane("dp-1"));
  t.is(put.status, 201);
  t.is(put.body.status.state, "online");
  t.is((await call(cp.url, "PUT", `${DP}/dp-1`, dataplane("dp-1"))).status, 200);
  const registered = put.body.status.lastSeenTime as string;
  // a heartbeat later than the registration refreshes lastSeenTime without persisting it
  await eventually(() => new Date().toISOString() > registered);
  const beat = await call(cp.url, "POST", `${DP}/dp-1/_heartbeat`, {});
  t.is(beat.status, 200);
  const seen = beat.body.status.lastSeenTime as string;
  t.true(seen > registered, `${seen} after ${registered}`);
  t.is((await call(cp.url, "GET", `${DP}/dp-1`)).body.status.lastSeenTime, seen);
  t.is((await call(cp.url, "GET", DP)).body.items[0].status.lastSeenTime, seen);
  t.is((await call(cp.url, "GET", "/dataplanes")).body.items[0].status.lastSeenTime, seen);
  t.is((await call(cp.url, "DELETE", `${DP}/dp-1`)).status, 200);
  t.is((await call(cp.url, "GET", `${DP}/dp-1`)).status, 404);
});

test("heartbeat › given a heartbeat body, when its state is online, draining, absent or empty, then it is taken; any other state is 400", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", `${DP}/dp-1`, dataplane("dp-1"));
  t.is((await call(cp.url, "POST", `${DP}/dp-1/_heartbeat`, { state: "draining" })).body.status.state, "draining");
  t.is((await call(cp.url, "POST", `${DP}/dp-1/_heartbeat`, "")).body.status.state, "draining", "an empty body keeps the state");
  t.is((await call(cp.url, "POST", `${DP}/dp-1/_heartbeat`, "null")).body.status.state, "draining", "a null document keeps the state");
  t.is((await call(cp.url, "POST", `${DP}/dp-1/_heartbeat`, { state: "online" })).body.status.state, "online");
  for (const state of ["offline", "Online", "", 1, null]) {
    const reply = await call(cp.url, "POST", `${DP}/dp-1/_heartbeat`, { state });
    t.is(reply.status, 400, JSON.stringify(state));
    t.is(reply.body.detail, "invalid heartbeat");
    t.deepEqual(reply.body.invalid_parameters, [{ field: "state", reason: "must be online or draining" }]);
  }
  t.is((await call(cp.url, "GET", `${DP}/dp-1`)).body.status.state, "online");
});

test("warnings › given a non-policy resource, when it is PUT, then the answer is the stored resource without warnings", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const put = await call(cp.url, "PUT", `${DP}/dp-1`, dataplane("dp-1"));
  t.is(put.body.warnings, undefined);
  t.is(put.body.name, "dp-1");
});

test("paths › given several trailing slashes on an unknown path, when read, then the 404 names the path without them", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.is((await call(cp.url, "GET", "/nothing//")).body.detail, "no such endpoint: /nothing");
  t.is((await call(cp.url, "GET", "/meshes/default/nothing///")).body.detail, "no resource type at /meshes/default/nothing");
});

test("warnings › given a policy with a deprecated field, when PUT, then each warning reads `<field>: <message>`", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const legacy = { ...mtp("legacy"), spec: { targetRef: { kind: "MeshService", name: "orders" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Allow" } }] } };
  const put = await call(cp.url, "PUT", `${MTP}/legacy`, legacy);
  t.is(put.status, 201);
  t.true(put.body.warnings.length > 0);
  for (const w of put.body.warnings as string[]) t.regex(w, /^spec\.[\w.[\]]+: \S/);
  t.true((put.body.warnings as string[]).includes("spec.from: 'from' field is deprecated and will be removed in 3.0, use 'rules' with MeshIdentity (spiffeId) instead"));
});

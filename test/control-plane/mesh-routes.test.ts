// The /meshes routes (control-plane/mesh-routes.ts): the list of stored and implicit meshes (those that exist only
// through their resources) with its ETag and long-poll, one mesh by name, and the methods each path allows.
import test from "ava";
import { call, controlPlaneFor, eventually, mtp } from "./helpers.js";
import { metric } from "./pushing-mesh.js";

const names = (body: { items: Array<{ name: string }> }) => body.items.map((i) => i.name);

test("meshes › given a policy in a mesh with no Mesh resource, when /meshes is read, then that mesh is listed until its last resource goes", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const before = await call(cp.url, "GET", "/meshes");
  t.deepEqual(before.body.items, [{ type: "Mesh", name: "default" }]);
  t.is((await call(cp.url, "PUT", "/meshes/prod/meshtrafficpermissions/p", mtp("p", "Allow", "prod"))).status, 201);
  const after = await call(cp.url, "GET", "/meshes");
  t.deepEqual(after.body.items, [{ type: "Mesh", name: "default" }, { type: "Mesh", name: "prod" }]);
  t.not(after.headers.get("etag"), before.headers.get("etag"));
  t.deepEqual((await call(cp.url, "GET", "/meshes/prod")).body, { type: "Mesh", name: "prod" });
  t.is((await call(cp.url, "DELETE", "/meshes/prod/meshtrafficpermissions/p")).status, 200);
  t.deepEqual(names((await call(cp.url, "GET", "/meshes")).body), ["default"]);
  const gone = await call(cp.url, "GET", "/meshes/prod");
  t.is(gone.status, 404);
  t.is(gone.body.detail, "mesh prod not found");
});

test("meshes › given a stored Mesh removed while its mesh holds nothing, when a policy is then PUT there, then /meshes lists the mesh again", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.is((await call(cp.url, "PUT", "/meshes/staging", { type: "Mesh", name: "staging" })).status, 201);
  t.deepEqual(names((await call(cp.url, "GET", "/meshes")).body), ["default", "staging"]);
  t.is((await call(cp.url, "DELETE", "/meshes/staging")).status, 200);
  t.deepEqual(names((await call(cp.url, "GET", "/meshes")).body), ["default"]);
  t.is((await call(cp.url, "PUT", "/meshes/staging/meshtrafficpermissions/p", mtp("p", "Allow", "staging"))).status, 201);
  t.deepEqual((await call(cp.url, "GET", "/meshes")).body.items, [{ type: "Mesh", name: "default" }, { type: "Mesh", name: "staging" }]);
});

test("meshes › given a long-poll on /meshes, when the first policy of a new mesh is PUT, then the poll answers with that mesh", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const first = await call(cp.url, "GET", "/meshes");
  const etag = first.headers.get("etag")!;
  t.is((await call(cp.url, "GET", "/meshes", undefined, { "if-none-match": etag })).status, 304);
  const poll = call(cp.url, "GET", "/meshes?wait=20s", undefined, { "if-none-match": etag });
  t.true(await eventually(async () => (await metric(cp.url, 'meshext_control_plane_long_poll_waiters{collection_kind="Mesh"}')) === 1), "the poll is held");
  // a write to a mesh already listed changes nothing /meshes shows
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", mtp("p"))).status, 201);
  t.is((await call(cp.url, "PUT", "/meshes/prod/meshtrafficpermissions/p", mtp("p", "Allow", "prod"))).status, 201);
  const changed = await poll;
  t.is(changed.status, 200);
  t.deepEqual(names(changed.body), ["default", "prod"]);
});

test("meshes › given a Mesh and the implicit default, when read by name, then the stored Mesh or a bare Mesh comes back; an unknown one is 404", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.deepEqual((await call(cp.url, "GET", "/meshes/default")).body, { type: "Mesh", name: "default" });
  await call(cp.url, "PUT", "/meshes/stored", { type: "Mesh", name: "stored", meshServices: { mode: "Exclusive" } });
  const stored = await call(cp.url, "GET", "/meshes/stored");
  t.is(stored.status, 200);
  t.deepEqual(stored.body.meshServices, { mode: "Exclusive" });
  const list = await call(cp.url, "GET", "/meshes?name=sto");
  t.deepEqual(names(list.body), ["stored"]);
  t.deepEqual(list.body.items[0].meshServices, { mode: "Exclusive" });
  const missing = await call(cp.url, "GET", "/meshes/nowhere");
  t.is(missing.status, 404);
  t.is(missing.body.detail, "mesh nowhere not found");
});

test("meshes › given /meshes and /meshes/{name}, when called with a method they do not serve, then 405 with the allowed methods", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const [method, path, allow] of [
    ["POST", "/meshes", "GET"],
    ["PUT", "/meshes", "GET"],
    ["DELETE", "/meshes", "GET"],
    ["POST", "/meshes/default", "GET, PUT, DELETE"],
  ] as const) {
    const reply = await call(cp.url, method, path, {});
    t.is(reply.status, 405, `${method} ${path}`);
    t.is(reply.headers.get("allow"), allow, `${method} ${path}`);
  }
});

test("meshes › given a mesh known through a policy that later got a Mesh, when the policy and then the Mesh are deleted and a new policy is PUT there, then /meshes lists it again", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.is((await call(cp.url, "PUT", "/meshes/staging/meshtrafficpermissions/p", mtp("p", "Allow", "staging"))).status, 201);
  t.is((await call(cp.url, "PUT", "/meshes/staging", { type: "Mesh", name: "staging" })).status, 201);
  t.is((await call(cp.url, "DELETE", "/meshes/staging/meshtrafficpermissions/p")).status, 200);
  t.is((await call(cp.url, "DELETE", "/meshes/staging")).status, 200);
  t.deepEqual(names((await call(cp.url, "GET", "/meshes")).body), ["default"]);

  t.is((await call(cp.url, "PUT", "/meshes/staging/meshtrafficpermissions/q", mtp("q", "Allow", "staging"))).status, 201);

  t.deepEqual(names((await call(cp.url, "GET", "/meshes")).body), ["default", "staging"]);
});

test("meshes › given two meshes, when a policy is deleted from a mesh that stays listed, then /meshes is not rendered again", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.is((await call(cp.url, "PUT", "/meshes/staging", { type: "Mesh", name: "staging" })).status, 201);
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", mtp("p"))).status, 201);
  t.deepEqual(names((await call(cp.url, "GET", "/meshes")).body), ["default", "staging"]);
  const renders = await metric(cp.url, "meshext_control_plane_list_page_renders_total");

  t.is((await call(cp.url, "DELETE", "/meshes/default/meshtrafficpermissions/p")).status, 200);

  t.deepEqual(names((await call(cp.url, "GET", "/meshes")).body), ["default", "staging"]);
  t.is(await metric(cp.url, "meshext_control_plane_list_page_renders_total"), renders, "the same version of the list, served from its rendering");
});

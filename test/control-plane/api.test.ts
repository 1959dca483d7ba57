// REST API behaviour of the embedded control plane: Kuma list/get/PUT/DELETE shape, pagination, validation errors,
// token on writes, durability across restart, concurrent writes.
import test from "ava";
import { call, mtp, startTestControlPlane, tempDir } from "./helpers.js";

test("api › PUT creates (201) then updates (200), GET returns the resource with Kuma metadata", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const created = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/allow-all", mtp("allow-all"));
  t.is(created.status, 201);
  const updated = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/allow-all", mtp("allow-all", "Deny"));
  t.is(updated.status, 200);
  const got = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/allow-all");
  t.is(got.status, 200);
  t.is(got.body.type, "MeshTrafficPermission");
  t.is(got.body.spec.from[0].default.action, "Deny");
  t.truthy(Date.parse(got.body.creationTime));
  t.truthy(Date.parse(got.body.modificationTime));
  t.is(got.body.creationTime, created.body.creationTime);
});

test("api › lists page with size/offset and an absolute next URL, null on the last page", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  for (const n of ["e", "c", "a", "d", "b"]) await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${n}`, mtp(n));
  const names: string[] = [];
  let path: string | null = "/meshes/default/meshtrafficpermissions?size=2";
  let pages = 0;
  while (path) {
    const page = await call(cp.url, "GET", path);
    t.is(page.status, 200);
    t.is(page.body.total, 5);
    names.push(...page.body.items.map((i: { name: string }) => i.name));
    path = page.body.next ? new URL(page.body.next).pathname + new URL(page.body.next).search : null;
    if (page.body.next) t.regex(page.body.next, /^http:\/\/127\.0\.0\.1:\d+\/meshes\/default\/meshtrafficpermissions\?size=2&offset=\d$/);
    pages++;
  }
  t.is(pages, 3);
  t.deepEqual(names, ["a", "b", "c", "d", "e"]);
  const bad = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions?size=1001");
  t.is(bad.status, 400);
  t.is(bad.body.invalid_parameters[0].field, "size");
});

test("api › lists across meshes at /<plural> and per mesh at /meshes/{mesh}/<plural>", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/one", mtp("one"));
  await call(cp.url, "PUT", "/meshes/other/meshtrafficpermissions/two", mtp("two", "Allow", "other"));
  const all = await call(cp.url, "GET", "/meshtrafficpermissions");
  t.deepEqual(all.body.items.map((i: { mesh: string; name: string }) => `${i.mesh}/${i.name}`), ["default/one", "other/two"]);
  const other = await call(cp.url, "GET", "/meshes/other/meshtrafficpermissions");
  t.is(other.body.total, 1);
  const meshes = await call(cp.url, "GET", "/meshes");
  t.deepEqual(meshes.body.items.map((m: { name: string }) => m.name), ["default", "other"]);
});

test("api › an invalid policy gets 400 with every invalid parameter and its field path, and is not stored", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const bad = mtp("bad") as any;
  bad.spec.from[0].default.action = "ALLOW";
  bad.spec.targetRef.kind = "Nope";
  const res = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/bad", bad);
  t.is(res.status, 400);
  t.is(res.body.title, "Could not process a resource");
  const fields = res.body.invalid_parameters.map((p: { field: string }) => p.field);
  t.true(fields.some((f: string) => f.includes("spec.targetRef.kind")), JSON.stringify(fields));
  t.true(fields.some((f: string) => f.includes("spec.from[0].default.action")), JSON.stringify(fields));
  t.is(res.body.causes.length, res.body.invalid_parameters.length);
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/bad")).status, 404);
});

test("api › the name in the body must match the URL", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const res = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/x", mtp("y"));
  t.is(res.status, 400);
  t.deepEqual(res.body.invalid_parameters, [{ field: "name", reason: "name from the URL has to be the same as in body" }]);
});

test("api › DELETE removes (200) and a second DELETE is 404", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/gone", mtp("gone"));
  t.is((await call(cp.url, "DELETE", "/meshes/default/meshtrafficpermissions/gone")).status, 200);
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/gone")).status, 404);
  t.is((await call(cp.url, "DELETE", "/meshes/default/meshtrafficpermissions/gone")).status, 404);
});

test("api › with a token every write needs it (401 otherwise) while reads stay open", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path, { token: "s3cret" });
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const path = "/meshes/default/meshtrafficpermissions/p";
  const anonymous = await call(cp.url, "PUT", path, mtp("p"));
  t.is(anonymous.status, 401);
  t.is((await call(cp.url, "PUT", path, mtp("p"), { authorization: "Bearer wrong" })).status, 401);
  t.is((await call(cp.url, "PUT", path, mtp("p"), { authorization: "Bearer s3cret" })).status, 201);
  t.is((await call(cp.url, "DELETE", path)).status, 401);
  t.is((await call(cp.url, "POST", "/meshes/default/dataplanes/d/_heartbeat", {})).status, 401);
  t.is((await call(cp.url, "GET", path)).status, 200);
});

test("api › 20 concurrent PUTs all land, and all survive a restart", async (t) => {
  const dir = await tempDir();
  let cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const names = Array.from({ length: 20 }, (_, i) => `p-${String(i).padStart(2, "0")}`);
  const replies = await Promise.all(names.map((n) => call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${n}`, mtp(n))));
  t.deepEqual(replies.map((r) => r.status), names.map(() => 201));
  // Same key from 10 writers at once: one resource, last write wins, never a torn file.
  await Promise.all(Array.from({ length: 10 }, (_, i) => call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p-00", mtp("p-00", i % 2 ? "Deny" : "Allow"))));
  await cp.stop();
  cp = await startTestControlPlane(dir.path);
  const list = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions?size=1000");
  t.is(list.body.total, 20);
  t.deepEqual(list.body.items.map((i: { name: string }) => i.name), names);
});

test("api › unknown paths are 404 and wrong methods 405 with Allow, both as problem bodies", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const missing = await call(cp.url, "GET", "/meshes/default/meshwhatever");
  t.is(missing.status, 404);
  t.is(missing.body.status, 404);
  const wrong = await call(cp.url, "POST", "/meshes/default/meshtrafficpermissions");
  t.is(wrong.status, 405);
  t.is(wrong.headers.get("allow"), "GET");
});

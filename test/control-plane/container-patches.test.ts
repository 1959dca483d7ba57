// ContainerPatch as a global resource of the embedded control plane: /containerpatches[/{name}] on a real socket.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import test from "ava";
import { call, controlPlaneFor, containerPatch, startTestControlPlane, tempDir } from "./helpers.js";


test("control-plane › given no patch, when a ContainerPatch is PUT, then it is created (201), replaced (200) and served by GET without a mesh", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const created = await call(cp.url, "PUT", "/containerpatches/hardened", containerPatch("hardened"));
  t.is(created.status, 201, JSON.stringify(created.body));
  const spec = { sidecarPatch: [], meshextSidecarPatch: [{ op: "add", path: "/env/-", value: { name: "A", value: "b" } }], initPatch: [{ op: "remove", path: "/args" }] };
  const replaced = await call(cp.url, "PUT", "/containerpatches/hardened", containerPatch("hardened", spec));
  t.is(replaced.status, 200);
  const got = await call(cp.url, "GET", "/containerpatches/hardened");
  t.is(got.status, 200);
  t.is(got.body.type, "ContainerPatch");
  t.is(got.body.name, "hardened");
  t.false("mesh" in got.body);
  t.deepEqual(got.body.spec, spec);
  t.is(got.body.creationTime, created.body.creationTime);
  t.truthy(Date.parse(got.body.modificationTime));
});

test("control-plane › given three patches, when listed with size=2, then pages are sorted by name with next, an ETag and the name filter", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const n of ["c", "a", "b"]) t.is((await call(cp.url, "PUT", `/containerpatches/${n}`, containerPatch(n))).status, 201);
  const first = await call(cp.url, "GET", "/containerpatches?size=2");
  t.is(first.status, 200);
  t.is(first.body.total, 3);
  t.deepEqual(first.body.items.map((i: { name: string }) => i.name), ["a", "b"]);
  t.regex(first.body.next, /^http:\/\/127\.0\.0\.1:\d+\/containerpatches\?size=2&offset=2$/);
  const etag = first.headers.get("etag");
  t.truthy(etag);
  const second = await call(cp.url, "GET", new URL(first.body.next).pathname + new URL(first.body.next).search);
  t.deepEqual(second.body.items.map((i: { name: string }) => i.name), ["c"]);
  t.is(second.body.next, null);
  t.is(second.headers.get("etag"), etag);
  const unchanged = await fetch(`${cp.url}/containerpatches`, { headers: { "if-none-match": etag! } });
  t.is(unchanged.status, 304);
  const filtered = await call(cp.url, "GET", "/containerpatches?name=b");
  t.deepEqual(filtered.body.items.map((i: { name: string }) => i.name), ["b"]);
});

test("control-plane › given a long-poll on /containerpatches, when a patch is PUT, then the wait answers 200 with it", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const empty = await call(cp.url, "GET", "/containerpatches");
  t.deepEqual(empty.body, { total: 0, items: [], next: null });
  const held = fetch(`${cp.url}/containerpatches?wait=10s`, { headers: { "if-none-match": empty.headers.get("etag")! } });
  await new Promise((r) => setTimeout(r, 100));
  await call(cp.url, "PUT", "/containerpatches/late", containerPatch("late"));
  const res = await held;
  t.is(res.status, 200);
  t.deepEqual(((await res.json()) as { items: Array<{ name: string }> }).items.map((i) => i.name), ["late"]);
});

test("control-plane › given a patch, when it is DELETEd, then GET and a second DELETE answer 404 and its file is gone", async (t) => {
  const { cp, dir } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/containerpatches/gone", containerPatch("gone"));
  t.truthy(await readFile(join(dir.path, "containerpatches", "gone.yaml"), "utf8"));
  t.is((await call(cp.url, "DELETE", "/containerpatches/gone")).status, 200);
  const got = await call(cp.url, "GET", "/containerpatches/gone");
  t.is(got.status, 404);
  t.is(got.body.detail, "ContainerPatch gone not found");
  t.is((await call(cp.url, "DELETE", "/containerpatches/gone")).status, 404);
  await t.throwsAsync(readFile(join(dir.path, "containerpatches", "gone.yaml")));
});

test("control-plane › given an invalid patch, when it is PUT, then 400 lists every invalid field with its path and nothing is stored", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const bad = {
    type: "ContainerPatch",
    name: "other",
    mesh: "default",
    spec: {
      sidecarPatch: [{ op: "upsert", path: "securityContext" }, { op: "add", path: "/a", value: "{not json" }],
      initPatch: "nope",
      meshextSidecarPatch: [{ op: "move", path: "/b" }],
    },
  };
  const res = await call(cp.url, "PUT", "/containerpatches/bad", bad);
  t.is(res.status, 400);
  t.is(res.body.title, "Could not process a resource");
  const fields = res.body.invalid_parameters.map((p: { field: string }) => p.field).sort();
  t.deepEqual(fields, [
    "mesh",
    "name",
    "spec.initPatch",
    "spec.meshextSidecarPatch[0].from",
    "spec.sidecarPatch[0].op",
    "spec.sidecarPatch[0].path",
    "spec.sidecarPatch[1].value",
  ]);
  t.deepEqual(res.body.causes.map((c: { field: string }) => c.field).sort(), fields);
  t.is((await call(cp.url, "GET", "/containerpatches/bad")).status, 404);
});

test("control-plane › given the Kubernetes form or a mesh-scoped path, when PUT, then it is refused with where to go instead", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const k8s = { apiVersion: "kuma.io/v1alpha1", kind: "ContainerPatch", metadata: { name: "k" }, spec: {} };
  const res = await call(cp.url, "PUT", "/containerpatches/k", k8s);
  t.is(res.status, 400);
  t.deepEqual(res.body.invalid_parameters.map((p: { field: string }) => p.field).sort(), ["apiVersion", "kind", "metadata", "name", "type"]);
  const meshScoped = await call(cp.url, "PUT", "/meshes/default/containerpatches/k", containerPatch("k"));
  t.is(meshScoped.status, 404);
  t.regex(meshScoped.body.detail, /global, outside any mesh: use \/containerpatches/);
  t.is((await call(cp.url, "POST", "/containerpatches", containerPatch("k"))).status, 405);
});

test("control-plane › given a token, when a ContainerPatch is written without it, then 401; with it the write lands; reads stay open", async (t) => {
  const { cp } = await controlPlaneFor(t, { token: "s3cret" });
  t.is((await call(cp.url, "PUT", "/containerpatches/p", containerPatch("p"))).status, 401);
  t.is((await call(cp.url, "PUT", "/containerpatches/p", containerPatch("p"), { authorization: "Bearer wrong" })).status, 401);
  t.is((await call(cp.url, "PUT", "/containerpatches/p", containerPatch("p"), { authorization: "Bearer s3cret" })).status, 201);
  t.is((await call(cp.url, "GET", "/containerpatches/p")).status, 200);
  t.is((await call(cp.url, "DELETE", "/containerpatches/p")).status, 401);
  t.is((await call(cp.url, "DELETE", "/containerpatches/p", undefined, { authorization: "Bearer s3cret" })).status, 200);
});

test("control-plane › given stored patches, when the control plane restarts on the same data dir, then they are served unchanged", async (t) => {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const first = await startTestControlPlane(dir.path);
  const stored = (await call(first.url, "PUT", "/containerpatches/kept", containerPatch("kept"))).body;
  await call(first.url, "PUT", "/containerpatches/dropped", containerPatch("dropped"));
  await call(first.url, "DELETE", "/containerpatches/dropped");
  await first.stop();
  const second = await startTestControlPlane(dir.path);
  t.teardown(() => second.stop());
  const list = await call(second.url, "GET", "/containerpatches");
  t.deepEqual(list.body.items, [stored]);
  t.deepEqual((await call(second.url, "GET", "/containerpatches/kept")).body, stored);
  const meshes = await call(second.url, "GET", "/meshes");
  t.deepEqual(meshes.body.items.map((m: { name: string }) => m.name), ["default"], "a global resource creates no mesh");
});

test("control-plane › given the discovery endpoint, when /_resources is read, then ContainerPatch is listed with Global scope", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const res = await call(cp.url, "GET", "/_resources");
  const cpType = res.body.resources.find((r: { name: string }) => r.name === "ContainerPatch");
  t.like(cpType, { name: "ContainerPatch", scope: "Global", path: "containerpatches", readOnly: false });
});

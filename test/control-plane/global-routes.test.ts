// The global-resource routes (control-plane/global-routes.ts) at their edges: the name in the URL (a Mesh's may not
// end in .yaml, a ContainerPatch's may), server-owned times ignored, and the 404 detail of a DELETE.
import test from "ava";
import { call, containerPatch, controlPlaneFor } from "./helpers.js";

test("global › given names ending in .yaml, when PUT, then a ContainerPatch takes one and a Mesh is refused naming the URL's name, as is a ContainerPatch name starting with -", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.is((await call(cp.url, "PUT", "/containerpatches/p.yaml", containerPatch("p.yaml"))).status, 201);
  const mesh = await call(cp.url, "PUT", "/meshes/m.yaml", { type: "Mesh", name: "m.yaml" });
  t.is(mesh.status, 400);
  t.is(mesh.body.detail, "invalid name in the URL");
  t.deepEqual(mesh.body.invalid_parameters.map((p: { field: string }) => p.field), ["name"]);
  const bad = await call(cp.url, "PUT", "/containerpatches/-p", containerPatch("-p"));
  t.is(bad.status, 400);
  t.is(bad.body.detail, "invalid name in the URL");
  t.deepEqual(bad.body.invalid_parameters.map((p: { field: string }) => p.field), ["name"]);
});

test("global › given server-owned times in the body, when a ContainerPatch is PUT, then the server's times are kept", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const old = "2001-01-01T00:00:00Z";
  const put = await call(cp.url, "PUT", "/containerpatches/p", { ...containerPatch("p"), creationTime: old, modificationTime: old });
  t.is(put.status, 201);
  t.not(put.body.creationTime, old);
  t.not(put.body.modificationTime, old);
});

test("global › given no such Mesh, when it is DELETEd, then 404 names its kind and name", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const reply = await call(cp.url, "DELETE", "/meshes/nowhere");
  t.is(reply.status, 404);
  t.is(reply.body.detail, "Mesh nowhere not found");
});

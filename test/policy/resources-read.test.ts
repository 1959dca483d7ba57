// resources read › edges of documents/resources.ts: grouping, the mesh field, violations that stop reading, hosts of odd status entries, a mesh's mTLS by name.
import test from "ava";
import { meshMtls, resourceFromObject, resourcesOf, type Resource } from "../../extproc/policy/documents/resources.js";

type Pairs = [string, string][];
const pairs = (r: { violations: { field: string; message: string }[] }): Pairs => r.violations.map((v) => [v.field, v.message]);
const mesh = (name: string, mtlsEnabled: boolean): Resource => ({ kind: "Mesh", name, labels: {}, mtlsEnabled });

test("resources read › given no resources, when grouped, then every group is empty", (t) => {
  t.deepEqual(resourcesOf([]), { meshes: [], services: [], identities: [], trusts: [] });
});

test("resources read › given a Mesh and a MeshService, when grouped, then each is in its own group alone", (t) => {
  const svc = resourceFromObject({ type: "MeshService", name: "web", spec: {} }).resource!;
  t.deepEqual(resourcesOf([mesh("default", true), svc]), { meshes: [mesh("default", true)], services: [svc], identities: [], trusts: [] });
});

test("resources read › given a universal MeshService whose mesh is a number (YAML `mesh: 123`), when read, then it is rejected at mesh", (t) => {
  const r = resourceFromObject({ type: "MeshService", name: "web", mesh: 123, spec: {} });
  t.is(r.resource, undefined);
  t.deepEqual(pairs(r), [["mesh", "must be a string"]]);
});

test("resources read › given a Kubernetes resource whose namespace is not a string, when read, then it is rejected at metadata.namespace", (t) => {
  t.deepEqual(pairs(resourceFromObject({ kind: "MeshService", metadata: { name: "web", namespace: 5 }, spec: {} })), [["metadata.namespace", "must be a string"]]);
});

test("resources read › given a Mesh with bad labels and a bad mtls, when read, then only the labels are reported (reading stops there)", (t) => {
  t.deepEqual(pairs(resourceFromObject({ type: "Mesh", name: "default", labels: { a: 1 }, mtls: "on" })), [["labels.a", "must be a string"]]);
});

test("resources read › given a valid universal MeshService, when read, then no violations and no zone field", (t) => {
  const r = resourceFromObject({ type: "MeshService", name: "web", spec: { ports: [{ port: 80 }] } });
  t.deepEqual(r.violations, []);
  t.false(r.resource !== undefined && "zone" in r.resource);
});

test("resources read › given status entries whose hostname or ip is not a string, when read, then they add no host", (t) => {
  // Given a MeshService with malformed status addresses and VIP; when read; then only the well-formed ones are hosts
  const r = resourceFromObject({
    type: "MeshService",
    name: "web",
    spec: {},
    status: { addresses: [{ hostname: 5 }, { hostname: "Web.Mesh" }], vip: { ip: 7 } },
  });
  t.deepEqual(r.violations, []);
  t.deepEqual(r.resource && "hosts" in r.resource ? r.resource.hosts : undefined, ["web.mesh"]);
});

test("resources read › given Meshes, when a mesh's mTLS is asked, then only the Mesh of that name answers", (t) => {
  const resources = resourcesOf([mesh("default", true), mesh("other", false)]);
  t.is(meshMtls(resources, "other"), false);
  t.is(meshMtls(resources, "default"), true);
  t.is(meshMtls(resources, "third"), undefined);
});

test("resources read › given a Kubernetes resource of an unknown kind, when read, then it is rejected at kind (not type)", (t) => {
  // Given a Kubernetes-style document (no `type`); when read; then the violation names its `kind` field
  const r = resourceFromObject({ kind: "Bogus", metadata: { name: "web" }, spec: {} });
  t.deepEqual(r.violations.map((v) => v.field), ["kind"]);
});

test("resources read › given a Kubernetes resource with a label that is not a string, when read, then it is rejected at metadata.labels", (t) => {
  t.deepEqual(pairs(resourceFromObject({ kind: "MeshService", metadata: { name: "web", labels: { a: 1 } }, spec: {} })), [["metadata.labels.a", "must be a string"]]);
});

test("resources read › given a Kubernetes resource with a top-level mesh number, when read, then it is ignored: the mesh comes from the label", (t) => {
  // Given a Kubernetes MeshService carrying a stray `mesh: 123`; when read; then it is accepted in its kuma.io/mesh label's mesh
  const r = resourceFromObject({ kind: "MeshService", metadata: { name: "web", labels: { "kuma.io/mesh": "other" } }, mesh: 123, spec: {} });
  t.deepEqual(r.violations, []);
  t.like(r.resource, { kind: "MeshService", mesh: "other" });
});

test("resources read › given a universal Mesh with a mesh number, when read, then it is accepted: a Mesh belongs to no mesh", (t) => {
  const r = resourceFromObject({ type: "Mesh", name: "default", mesh: 123 });
  t.deepEqual(r.violations, []);
  t.like(r.resource, { kind: "Mesh", name: "default" });
});

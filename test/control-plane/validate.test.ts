// What a control-plane PUT body must satisfy (validate.ts), through its exported pure checks: names that become
// file names, mesh names beside Mesh files, URL/body agreement per resource family, ContainerPatches and Dataplanes.
import test from "ava";
import {
  containerPatchViolations,
  dataplaneViolations,
  MAX_STORED_NAME_CHARS,
  meshNameViolations,
  nameViolations,
  validateGlobalResource,
  validateResource,
} from "../../extproc/control-plane/validate.js";
import { CONTAINER_PATCH_TYPE, DATAPLANE_TYPE, IDENTITY_TYPES, MESH_TYPE, POLICY_TYPES, SERVICE_TYPES } from "../../extproc/kuma-rest/resources.js";
import { containerPatch, dataplane, meshIdentity, mtp } from "./helpers.js";

const NAME_RULE = "must be 1-253 characters of letters, digits, '.', '_' or '-', starting and ending with a letter or digit";
const tooLongHere = `must be at most ${MAX_STORED_NAME_CHARS} characters here: the control plane stores each resource in a file named after it`;
const [MTP] = POLICY_TYPES;
const MESH_SERVICE = SERVICE_TYPES.find((t) => t.kind === "MeshService")!;
const MESH_IDENTITY = IDENTITY_TYPES.find((t) => t.kind === "MeshIdentity")!;
const MESH_TRUST = IDENTITY_TYPES.find((t) => t.kind === "MeshTrust")!;
const typeMessage = (kind: string, plural: string) => `must be ${kind} at /meshes/{mesh}/${plural}`;
const NAME_MISMATCH = { field: "name", message: "name from the URL has to be the same as in body" };
const MESH_MISMATCH = { field: "mesh", message: "mesh from the URL has to be the same as in body" };

test("names › given the temp file name the store writes through, then the longest stored name keeps that file name within 255 bytes", (t) => {
  // `.tmp-<name>.yaml.<pid up to 4194304>.<8 hex>` must fit in 255 bytes
  t.is(`.tmp-${"a".repeat(MAX_STORED_NAME_CHARS)}.yaml.4194304.12345678`.length, 255);
});

test("names › given a valid name within the stored limit, when checked, then no violation", (t) => {
  t.deepEqual(nameViolations("name", "backend-1.v2_x"), []);
  t.deepEqual(nameViolations("name", "a".repeat(MAX_STORED_NAME_CHARS)), []);
});

test("names › given a name breaking Kuma's rule, when checked, then one violation on the field quoting the rule", (t) => {
  for (const bad of ["", "-a", "a-", "a/b", "a b", "a".repeat(254)]) {
    t.deepEqual(nameViolations("path.name", bad), [{ field: "path.name", message: NAME_RULE }], JSON.stringify(bad));
  }
});

test("names › given a Kuma-valid name longer than the store keeps, when checked, then one violation naming the limit and the reason", (t) => {
  for (const long of ["a".repeat(MAX_STORED_NAME_CHARS + 1), "a".repeat(253)]) {
    t.deepEqual(nameViolations("name", long), [{ field: "name", message: tooLongHere }]);
  }
  t.regex(tooLongHere, new RegExp(`at most ${MAX_STORED_NAME_CHARS} characters`));
});

test("mesh names › given a mesh name ending in .yaml, when checked, then refused because it would collide with the Mesh file", (t) => {
  t.deepEqual(meshNameViolations("mesh", "coll.yaml"), [
    { field: "mesh", message: "must not end in .yaml: the control plane stores Mesh `x` as the file x.yaml beside the directory of mesh `x.yaml`" },
  ]);
});

test("mesh names › given other mesh names, when checked, then only the name rule applies", (t) => {
  for (const ok of ["default", "coll.yml", "yaml", "coll.yaml.d", "coll-yaml"]) t.deepEqual(meshNameViolations("mesh", ok), [], ok);
  // an invalid name gets the name rule alone, even when it also ends in .yaml
  t.deepEqual(meshNameViolations("mesh", "-coll.yaml"), [{ field: "mesh", message: NAME_RULE }]);
  t.deepEqual(meshNameViolations("mesh", `${"a".repeat(MAX_STORED_NAME_CHARS)}.yaml`), [{ field: "mesh", message: tooLongHere }]);
});

test("resources › given a body that is not a mapping, when validated, then one violation on the whole body", (t) => {
  for (const doc of [null, undefined, "text", 3, ["a"]]) {
    t.deepEqual(validateResource(MTP, "default", "p", doc), [{ field: "", message: "must be a mapping with type, mesh, name" }], JSON.stringify(doc));
  }
});

test("resources › given a valid policy whose mesh is omitted, when validated, then it takes the URL's mesh and is valid", (t) => {
  const { mesh: _mesh, ...noMesh } = mtp("p");
  t.deepEqual(validateResource(MTP, "default", "p", noMesh), []);
  t.deepEqual(validateResource(MTP, "other", "p", noMesh), []);
  t.deepEqual(validateResource(MTP, "default", "p", mtp("p")), []);
});

test("resources › given a policy disagreeing with the URL on type, mesh and name, when validated, then each is named once, first", (t) => {
  const doc = { ...mtp("q", "Allow", "elsewhere"), type: "MeshRateLimit" };
  const violations = validateResource(MTP, "default", "p", doc);
  t.deepEqual(violations.slice(0, 3), [{ field: "type", message: typeMessage("MeshTrafficPermission", "meshtrafficpermissions") }, MESH_MISMATCH, NAME_MISMATCH]);
  // the policy validator's own complaint about `type` is not repeated
  t.is(violations.filter((v) => v.field === "type").length, 1);
});

test("resources › given an invalid policy, when validated, then the policy validator's violations are returned", (t) => {
  const bad = { ...mtp("p"), spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Maybe" } }] } };
  t.deepEqual(validateResource(MTP, "default", "p", bad).map((v) => v.field), ["spec.from[0].default.action"]);
});

test("resources › given a policy valid only in Kuma 2.14, when validated for 3.0, then the version's rules apply", (t) => {
  // Kuma 3.0 removed `from`
  t.deepEqual(validateResource(MTP, "default", "p", mtp("p"), "2.14"), []);
  t.true(validateResource(MTP, "default", "p", mtp("p"), "3.0").length > 0);
});

test("resources › given a MeshService, when validated, then the service validator runs and its `name` duplicate is dropped", (t) => {
  const ok = { type: "MeshService", mesh: "default", name: "web", spec: { ports: [{ port: 80 }] } };
  t.deepEqual(validateResource(MESH_SERVICE, "default", "web", ok), []);
  t.deepEqual(validateResource(MESH_SERVICE, "default", "web", { ...ok, spec: { ports: [{ port: 0 }] } }).map((v) => v.field), ["spec.ports[0].port"]);
  // the body's name (too long for a service) disagrees with the URL: the URL/body message wins on `name`
  const long = "s".repeat(64);
  t.deepEqual(validateResource(MESH_SERVICE, "default", "web", { ...ok, name: long }), [NAME_MISMATCH]);
  t.deepEqual(validateResource(MESH_SERVICE, "default", long, { ...ok, name: long }).map((v) => v.field), ["name"]);
  t.notDeepEqual(validateResource(MESH_SERVICE, "default", long, { ...ok, name: long }), [NAME_MISMATCH]);
});

test("resources › given a MeshIdentity, when validated, then the identity validator runs with the URL's mesh", (t) => {
  const { mesh: _mesh, ...noMesh } = meshIdentity("orders", { app: "orders" });
  t.deepEqual(validateResource(MESH_IDENTITY, "default", "orders", noMesh), []);
  const bad = { ...noMesh, spec: { provider: { type: "Bundled" } } };
  const violations = validateResource(MESH_IDENTITY, "default", "orders", bad);
  t.true(violations.length > 0);
  t.true(violations.every((v) => v.field.startsWith("spec")), JSON.stringify(violations));
});

test("resources › given an identity body of another type, when validated, then only the type mismatch is reported", (t) => {
  const doc = { type: "MeshTrust", mesh: "default", name: "orders", spec: {} };
  t.deepEqual(validateResource(MESH_IDENTITY, "default", "orders", doc), [{ field: "type", message: typeMessage("MeshIdentity", "meshidentities") }]);
  t.deepEqual(validateResource(MESH_TRUST, "default", "orders", { ...doc, type: "MeshIdentity" }), [{ field: "type", message: typeMessage("MeshTrust", "meshtrusts") }]);
});

test("resources › given a Dataplane, when validated, then URL/body agreement and the Dataplane checks both apply", (t) => {
  t.deepEqual(validateResource(DATAPLANE_TYPE, "default", "dp-1", dataplane("dp-1")), []);
  const doc = { ...dataplane("dp-2", "backend", "other"), networking: { address: "", inbound: [{ port: 8080, tags: { "kuma.io/service": "backend" } }] } };
  t.deepEqual(validateResource(DATAPLANE_TYPE, "default", "dp-1", doc), [
    MESH_MISMATCH,
    NAME_MISMATCH,
    { field: "networking.address", message: "must be a non-empty string" },
  ]);
  // the Kuma version decides whether inbound tags are required
  const untagged = { ...dataplane("dp-1"), networking: { address: "10.0.0.1", inbound: [{ port: 8080 }] } };
  t.deepEqual(validateResource(DATAPLANE_TYPE, "default", "dp-1", untagged, "3.0"), []);
  t.deepEqual(validateResource(DATAPLANE_TYPE, "default", "dp-1", untagged, "2.14").map((v) => v.field), ["networking.inbound[0].tags"]);
});

test("global resources › given a Mesh, when validated, then the Mesh rules apply", (t) => {
  t.deepEqual(validateGlobalResource(MESH_TYPE, "m", { type: "Mesh", name: "m" }), []);
  t.deepEqual(validateGlobalResource(MESH_TYPE, "m", { type: "Mesh", name: "n" }), [NAME_MISMATCH]);
});

test("global resources › given a type that is not global, when validated, then it cannot be written", (t) => {
  t.deepEqual(validateGlobalResource(DATAPLANE_TYPE, "x", { type: "Dataplane", name: "x" }), [{ field: "type", message: "Dataplane cannot be written" }]);
});

test("global resources › given a ContainerPatch, when validated, then the ContainerPatch rules apply", (t) => {
  t.deepEqual(validateGlobalResource(CONTAINER_PATCH_TYPE, "harden", containerPatch("harden")), []);
  t.deepEqual(validateGlobalResource(CONTAINER_PATCH_TYPE, "harden", containerPatch("other")), [NAME_MISMATCH]);
});

test("container patches › given a body that is not a mapping, when validated, then one violation on the whole body", (t) => {
  for (const doc of [null, "x", ["a"]]) t.deepEqual(containerPatchViolations("p", doc), [{ field: "", message: "must be a mapping with type, name, spec" }]);
});

test("container patches › given a valid universal ContainerPatch, when validated, then no violation", (t) => {
  t.deepEqual(containerPatchViolations("p", containerPatch("p")), []);
  t.deepEqual(containerPatchViolations("p", containerPatch("p", {})), []);
});

test("container patches › given a wrong type, name and a mesh, when validated, then each is named with its reason", (t) => {
  const doc = { ...containerPatch("q"), type: "Mesh", mesh: "default" };
  t.deepEqual(containerPatchViolations("p", doc), [
    { field: "type", message: "must be ContainerPatch at /containerpatches" },
    NAME_MISMATCH,
    { field: "mesh", message: "must not be set: a ContainerPatch is global, outside any mesh" },
  ]);
});

test("container patches › given Kubernetes envelope fields, when validated, then each is refused in favour of the universal form", (t) => {
  const universal = "must not be set: the REST API takes the universal form (type, name, spec)";
  for (const field of ["apiVersion", "kind", "metadata"]) {
    const doc = { ...containerPatch("p"), [field]: field === "metadata" ? { name: "p" } : field === "kind" ? "ContainerPatch" : "kuma.io/v1alpha1" };
    t.deepEqual(containerPatchViolations("p", doc), [{ field, message: universal }], field);
  }
});

test("container patches › given no spec or a spec that is not a mapping, when validated, then spec is named once", (t) => {
  const specMessage = "must be a mapping with sidecarPatch, meshextSidecarPatch and/or initPatch";
  t.deepEqual(containerPatchViolations("p", { type: "ContainerPatch", name: "p" }), [{ field: "spec", message: specMessage }]);
  t.deepEqual(containerPatchViolations("p", { type: "ContainerPatch", name: "p", spec: ["x"] }), [{ field: "spec", message: specMessage }]);
});

test("container patches › given patch operations inject would refuse, when validated, then the parser's violations are returned", (t) => {
  const doc = containerPatch("p", { sidecarPatch: [{ op: "explode", path: "/x" }], sidecarPatches: [] });
  const fields = containerPatchViolations("p", doc).map((v) => v.field);
  t.true(fields.includes("spec.sidecarPatches"), fields.join());
  t.true(fields.some((f) => f.startsWith("spec.sidecarPatch[0]")), fields.join());
});

test("dataplanes › given no networking mapping, when validated, then only networking is named", (t) => {
  for (const networking of [undefined, "x", ["a"]]) t.deepEqual(dataplaneViolations({ networking }), [{ field: "networking", message: "must be defined" }]);
});

test("dataplanes › given networking without address, inbound or gateway, when validated, then both are named", (t) => {
  t.deepEqual(dataplaneViolations({ networking: {} }), [
    { field: "networking.address", message: "must be a non-empty string" },
    { field: "networking", message: "has to contain at least one inbound interface or gateway" },
  ]);
  t.deepEqual(dataplaneViolations({ networking: { address: 10 } }).map((v) => v.field), ["networking.address", "networking"]);
});

test("dataplanes › given a gateway and no inbound, when validated, then it is valid", (t) => {
  t.deepEqual(dataplaneViolations({ networking: { address: "10.0.0.1", gateway: { tags: { "kuma.io/service": "edge" } } } }), []);
});

test("dataplanes › given inbound that is not a list, when validated, then inbound is named", (t) => {
  t.deepEqual(dataplaneViolations({ networking: { address: "10.0.0.1", inbound: { port: 1 } } }), [{ field: "networking.inbound", message: "must be a list" }]);
});

test("dataplanes › given inbound entries that are not mappings, when validated, then each is named by index", (t) => {
  t.deepEqual(dataplaneViolations({ networking: { address: "10.0.0.1", inbound: ["x", null] } }), [
    { field: "networking.inbound[0]", message: "must be a mapping" },
    { field: "networking.inbound[1]", message: "must be a mapping" },
  ]);
});

test("dataplanes › given inbound ports outside 1-65535 or not integers, when validated, then each port is named", (t) => {
  const tags = { "kuma.io/service": "backend" };
  const ports = [0, 65536, 1.5, "80", undefined, -1];
  const violations = dataplaneViolations({ networking: { address: "10.0.0.1", inbound: ports.map((port) => ({ port, tags })) } });
  t.deepEqual(violations, ports.map((_, i) => ({ field: `networking.inbound[${i}].port`, message: "port must be in the range from 1 to 65535" })));
  t.deepEqual(dataplaneViolations({ networking: { address: "10.0.0.1", inbound: [1, 65535].map((port) => ({ port, tags })) } }), []);
});

test("dataplanes › given Kuma 2.14, when an inbound has no tags or no service tag, then the service tag is required", (t) => {
  const inbound = [{ port: 1 }, { port: 2, tags: "x" }, { port: 3, tags: {} }, { port: 4, tags: { "kuma.io/service": "" } }, { port: 5, tags: { "kuma.io/service": 7 } }];
  t.deepEqual(dataplaneViolations({ networking: { address: "10.0.0.1", inbound } }), [
    { field: "networking.inbound[0].tags", message: "must be a mapping with at least kuma.io/service" },
    { field: "networking.inbound[1].tags", message: "must be a mapping with at least kuma.io/service" },
    { field: 'networking.inbound[2].tags["kuma.io/service"]', message: "tag has to exist" },
    { field: 'networking.inbound[3].tags["kuma.io/service"]', message: "tag has to exist" },
    { field: 'networking.inbound[4].tags["kuma.io/service"]', message: "tag has to exist" },
    { field: 'networking.inbound[4].tags["kuma.io/service"]', message: "tag value must be a string" },
  ]);
  // the default version is 2.14
  t.deepEqual(dataplaneViolations({ networking: { address: "10.0.0.1", inbound } }, "2.14"), dataplaneViolations({ networking: { address: "10.0.0.1", inbound } }));
});

test("dataplanes › given Kuma 3.0, when inbounds have no tags, then they are valid, but tags given must be a string map", (t) => {
  const inbound = [{ port: 1 }, { port: 2, tags: {} }, { port: 3, tags: "x" }, { port: 4, tags: { version: 2 } }];
  t.deepEqual(dataplaneViolations({ networking: { address: "10.0.0.1", inbound } }, "3.0"), [
    { field: "networking.inbound[2].tags", message: "must be a mapping" },
    { field: 'networking.inbound[3].tags["version"]', message: "tag value must be a string" },
  ]);
});

test("dataplanes › given a valid inbound with extra string tags, when validated, then no violation", (t) => {
  t.deepEqual(dataplaneViolations({ networking: { address: "10.0.0.1", inbound: [{ port: 8080, tags: { "kuma.io/service": "backend", version: "v1" } }] } }), []);
});

test("dataplanes › given an inbound state Kuma does not define, when validated, then the state is named; Ready, NotReady and Ignored pass", (t) => {
  const tags = { "kuma.io/service": "backend" };
  const states = ["Bogus", "ready", 1, null];
  t.deepEqual(dataplaneViolations({ networking: { address: "10.0.0.1", inbound: states.map((state, i) => ({ port: 80 + i, tags, state })) } }),
    states.map((_, i) => ({ field: `networking.inbound[${i}].state`, message: "must be one of Ready, NotReady, Ignored" })));
  t.deepEqual(dataplaneViolations({ networking: { address: "10.0.0.1", inbound: ["Ready", "NotReady", "Ignored"].map((state, i) => ({ port: 80 + i, tags, state })) } }), []);
});

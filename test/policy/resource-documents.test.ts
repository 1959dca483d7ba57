// resource documents › Mesh, MeshService, MeshExternalService, MeshMultiZoneService, MeshIdentity and MeshTrust
// documents (universal and Kubernetes form) as the policy engine reads them, and every violation of a bad one.
import test from "ava";
import { resourceFromObject } from "../../extproc/policy/documents/resources.js";

type Pairs = [string, string][];
const pairs = (r: { violations: { field: string; message: string }[] }): Pairs => r.violations.map((v) => [v.field, v.message]);

const rejects = test.macro({
  exec(t, doc: unknown, expected: Pairs) {
    // Given a resource document; when read; then no resource and exactly these violations
    const r = resourceFromObject(doc);
    t.is(r.resource, undefined);
    t.deepEqual(pairs(r), expected);
  },
  title: (provided = "") => `resource documents › rejects ${provided}`,
});

test("a document that is not an object", rejects, [], [["document", "must be an object"]]);
test("an unknown type and no name", rejects, { type: "MeshGateway" }, [
  ["type", "must be one of Mesh, MeshService, MeshExternalService, MeshMultiZoneService, MeshIdentity, MeshTrust"],
  ["name", "must be defined"],
]);
test("a Kubernetes form without metadata", rejects, { kind: "MeshService", spec: {} }, [
  ["metadata", "must be defined"],
  ["metadata.name", "must be defined"],
]);
test("labels that are not strings", rejects, { type: "MeshService", name: "s", labels: { a: 1 }, spec: {} }, [["labels.a", "must be a string"]]);
test("a Mesh whose mtls is not a mapping", rejects, { type: "Mesh", name: "default", mtls: "on" }, [["mtls", "must be a mapping"]]);
test("a Mesh whose enabledBackend is not a string", rejects, { type: "Mesh", name: "default", mtls: { enabledBackend: 1, backends: [] } }, [["mtls.enabledBackend", "must be a string"]]);
test("a Mesh whose enabledBackend names no backend", rejects, { type: "Mesh", name: "default", mtls: { enabledBackend: "ca-2", backends: [{ name: "ca-1" }, "x"] } }, [
  ["mtls.enabledBackend", "has to be set to one of the backends in the mesh"],
]);
test("a Kubernetes Mesh's paths start at spec", rejects, { kind: "Mesh", metadata: { name: "default" }, spec: { mtls: { enabledBackend: "ca-2" } } }, [
  ["spec.mtls.enabledBackend", "has to be set to one of the backends in the mesh"],
]);
test("a MeshService port out of range, one not an object, one with no port", rejects, { type: "MeshService", name: "s", spec: { ports: [{ port: 0 }, "80", {}] } }, [
  ["spec.ports[0].port", "must be in inclusive range [1, 65535]"],
  ["spec.ports[1]", "must be an object"],
  ["spec.ports[2].port", "must be defined"],
]);
test("MeshService ports that are not a list", rejects, { type: "MeshService", name: "s", spec: { ports: { port: 80 } } }, [["spec.ports", "must be a list"]]);
test("a MeshExternalService without a port", rejects, { type: "MeshExternalService", name: "e", spec: { match: {} } }, [["spec.match.port", "must be defined"]]);
test("a MeshIdentity whose spec is not an object", rejects, { type: "MeshIdentity", name: "i", mesh: "m", spec: "x" }, [["spec", "must be an object"]]);
test("a MeshTrust without bundles", rejects, { type: "MeshTrust", name: "t", mesh: "m", spec: { trustDomain: "d" } }, [["spec.caBundles", "must not be empty"]]);

test("resource documents › a Mesh: mTLS on only with an enabled backend of its own", (t) => {
  // Given Meshes with and without an enabled backend; when read; then
  t.deepEqual(resourceFromObject({ type: "Mesh", name: "default", labels: { team: "x" }, mtls: { enabledBackend: "ca-1", backends: [{ name: "ca-1" }] } }), {
    resource: { kind: "Mesh", name: "default", labels: { team: "x" }, mtlsEnabled: true },
    violations: [],
  });
  t.like(resourceFromObject({ type: "Mesh", name: "default", mtls: { backends: [{ name: "ca-1" }] } }), { resource: { mtlsEnabled: false } });
  t.like(resourceFromObject({ type: "Mesh", name: "default", mtls: { enabledBackend: "", backends: [] } }), { resource: { mtlsEnabled: false } });
  t.like(resourceFromObject({ type: "Mesh", name: "default" }), { resource: { mtlsEnabled: false, labels: {} } });
  t.like(resourceFromObject({ kind: "Mesh", metadata: { name: "k" }, spec: { mtls: { enabledBackend: "b", backends: [{ name: "b" }] } } }), { resource: { name: "k", mtlsEnabled: true } });
});

test("resource documents › a MeshService: mesh, name with namespace, display name, ports, hosts from status", (t) => {
  // Given a Kubernetes MeshService with status addresses and VIPs; when read; then
  const r = resourceFromObject({
    kind: "MeshService",
    metadata: { name: "backend", namespace: "shop", labels: { "kuma.io/mesh": "m", "kuma.io/display-name": "backend", "kuma.io/zone": "east" } },
    spec: { ports: [{ port: 80, name: "http", appProtocol: "http" }, { port: 9090 }] },
    status: { addresses: [{ hostname: "Backend.Shop.svc" }, "x"], vips: [{ ip: "10.0.0.1" }, { ip: 5 }], vip: { ip: "10.0.0.2" } },
  });
  t.like(r.resource, { kind: "MeshService", mesh: "m", name: "backend.shop", displayName: "backend", namespace: "shop", zone: "east" });
  t.deepEqual(r.resource && "ports" in r.resource ? r.resource.ports : undefined, [{ port: 80, name: "http", appProtocol: "http" }, { port: 9090 }]);
  t.deepEqual(r.resource && "hosts" in r.resource ? r.resource.hosts : undefined, ["backend.shop.svc", "10.0.0.1", "10.0.0.2"]);
  // a universal one is in its mesh field's mesh (default when absent), with no namespace and its name as display name
  const u = resourceFromObject({ type: "MeshService", name: "web", spec: {} });
  t.like(u.resource, { mesh: "default", name: "web", displayName: "web" });
  t.false(u.resource !== undefined && "namespace" in u.resource);
  t.like(resourceFromObject({ type: "MeshService", name: "web", mesh: "other", spec: {} }).resource, { mesh: "other" });
});

test("resource documents › a MeshExternalService: its match port and protocol, hosts from its endpoints", (t) => {
  // Given a MeshExternalService; when read; then one port of its match and its endpoint addresses as hosts
  const r = resourceFromObject({ type: "MeshExternalService", name: "ext", spec: { match: { port: 443, protocol: "tls" }, endpoints: [{ address: "API.example.com" }, { address: 1 }] } });
  t.deepEqual(r.resource && "ports" in r.resource ? r.resource.ports : undefined, [{ port: 443, appProtocol: "tls" }]);
  t.deepEqual(r.resource && "hosts" in r.resource ? r.resource.hosts : undefined, ["api.example.com"]);
  const plain = resourceFromObject({ type: "MeshExternalService", name: "ext", spec: { match: { port: 80 } } });
  t.deepEqual(plain.resource && "ports" in plain.resource ? plain.resource.ports : undefined, [{ port: 80 }]);
});

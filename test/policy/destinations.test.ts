// Outbound destinations as real resources: which service an :authority names, and which `to[].targetRef`s resolve to it.
import test from "ava";
import { refResolvesTo, resolveDestination, type Destination } from "../../extproc/policy/plans/destinations.js";
import type { MeshResources, ServiceResource } from "../../extproc/policy/documents/resources.js";
import type { Policy, TargetRef } from "../../extproc/policy/model/types.js";

function services(): Record<"web" | "api" | "webOther" | "pay", ServiceResource> {
  return {
    web: {
      kind: "MeshService", mesh: "default", name: "web.shop", displayName: "web", namespace: "shop",
      labels: { app: "web", tier: "front" }, ports: [{ port: 80, name: "http" }, { port: 8080 }],
      hosts: ["web.shop.svc.cluster.local", "10.0.0.5", "fd00::5"], spec: {},
    },
    api: { kind: "MeshService", mesh: "default", name: "api", displayName: "api", labels: {}, ports: [{ port: 9000 }], hosts: ["api.internal"], spec: {} },
    webOther: {
      kind: "MeshService", mesh: "other", name: "web.shop", displayName: "web", namespace: "shop",
      labels: {}, ports: [{ port: 81 }], hosts: ["web.shop.svc.cluster.local"], spec: {},
    },
    pay: {
      kind: "MeshExternalService", mesh: "default", name: "pay", displayName: "pay", namespace: "billing",
      labels: { app: "web" }, ports: [{ port: 443 }], hosts: ["pay.example.com"], spec: {},
    },
  };
}

function resources(): MeshResources {
  const s = services();
  // the other mesh's copy first: a lookup that ignored the mesh would find it before the right one
  return { meshes: [], services: [s.webOther, s.web, s.api, s.pay] };
}

const resolveCases: [string, string, string, string | undefined][] = [
  // [what, authority, mesh, expected key (undefined: no destination)]
  ["a hostname with a named port", "web.shop.svc.cluster.local:80", "default", "MeshService/web.shop:http"],
  ["a hostname in capitals with an unnamed port (section = its number)", "WEB.Shop.svc.cluster.local:8080", "default", "MeshService/web.shop:8080"],
  ["a VIP", "10.0.0.5:8080", "default", "MeshService/web.shop:8080"],
  ["a bracketed IPv6 VIP with a port", "[fd00::5]:80", "default", "MeshService/web.shop:http"],
  ["a bracketed IPv6 VIP without a port", "[fd00::5]", "default", "MeshService/web.shop:"],
  ["no port, service with two ports: no port chosen", "web.shop.svc.cluster.local", "default", "MeshService/web.shop:"],
  ["no port, service with one port: that port", "api.internal", "default", "MeshService/api:9000"],
  ["a port the service does not have: no port", "web.shop.svc.cluster.local:9999", "default", "MeshService/web.shop:"],
  ["the display name with .mesh", "web.mesh:80", "default", "MeshService/web.shop:http"],
  ["the display name alone", "api:9000", "default", "MeshService/api:9000"],
  ["the resource name", "web.shop:8080", "default", "MeshService/web.shop:8080"],
  ["an external service's hostname", "pay.example.com:443", "default", "MeshExternalService/pay:443"],
  ["a hostname claimed in another mesh too", "web.shop.svc.cluster.local:81", "other", "MeshService/web.shop:81"],
  ["a display name in another mesh", "web:81", "other", "MeshService/web.shop:81"],
  ["a name no service has", "nope:80", "default", undefined],
  ["a name of another mesh's only service", "api:9000", "other", undefined],
  ["a port with trailing junk", "web.shop.svc.cluster.local:80x", "default", undefined],
  ["a stray [ inside a name (only an outer pair of brackets is dropped)", "ap[i:9000", "default", undefined],
  ["a stray ] inside a name", "ap]i:9000", "default", undefined],
  ["more than one colon", "junk:web.mesh:80", "default", undefined],
  ["an unclosed IPv6 bracket", "[fd00::5:80", "default", undefined],
];

for (const [what, authority, mesh, key] of resolveCases) {
  test(`given services, when the authority is ${what} (${authority} in ${mesh}), then the destination is ${key ?? "none"}`, (t) => {
    const dest = resolveDestination(authority, resources(), mesh);
    t.is(dest?.key, key);
    if (dest) t.is(dest.service.mesh, mesh);
  });
}

test("given a resolved destination, when its port is read, then it is the service's port object for the authority's port", (t) => {
  const dest = resolveDestination("web.shop.svc.cluster.local:80", resources(), "default")!;
  t.deepEqual(dest.port, { port: 80, name: "http" });
  t.false("port" in resolveDestination("web.shop.svc.cluster.local", resources(), "default")!);
});

test("given no services, when any authority is resolved, then there is no destination", (t) => {
  t.is(resolveDestination("web.mesh:80", { meshes: [], services: [] }, "default"), undefined);
});

function dest(service: ServiceResource, port?: number): Destination {
  const p = service.ports.find((x) => x.port === port);
  return { service, ...(p ? { port: p } : {}), key: "k" };
}

const refCases: [string, TargetRef, string | undefined, keyof ReturnType<typeof services>, number | undefined, boolean][] = [
  // [what, ref, policy namespace, service, destination port, resolves]
  ["name + namespace", { kind: "MeshService", name: "web", namespace: "shop" }, undefined, "web", 80, true],
  ["name + namespace, no port known", { kind: "MeshService", name: "web", namespace: "shop" }, undefined, "web", undefined, true],
  ["name + another namespace", { kind: "MeshService", name: "web", namespace: "other" }, "shop", "web", 80, false],
  ["another name + the namespace", { kind: "MeshService", name: "api", namespace: "shop" }, undefined, "web", 80, false],
  ["name, namespace from the policy", { kind: "MeshService", name: "web" }, "shop", "web", 80, true],
  ["name, no namespace anywhere, namespaced service", { kind: "MeshService", name: "web" }, undefined, "web", 80, false],
  ["name, no namespace anywhere, service without namespace", { kind: "MeshService", name: "api" }, undefined, "api", 9000, true],
  ["the ref's namespace wins over the policy's", { kind: "MeshService", name: "web", namespace: "shop" }, "elsewhere", "web", 80, true],
  ["another kind with the same labels", { kind: "MeshExternalService", labels: { app: "web" } }, undefined, "web", 80, false],
  ["another kind with the same name", { kind: "MeshExternalService", name: "web", namespace: "shop" }, undefined, "web", 80, false],
  ["labels all held", { kind: "MeshService", labels: { app: "web" } }, undefined, "web", 80, true],
  ["labels, one not held", { kind: "MeshService", labels: { app: "web", tier: "back" } }, undefined, "web", 80, false],
  ["neither name nor labels", { kind: "MeshService" }, undefined, "web", 80, false],
  ["sectionName = the port's name", { kind: "MeshService", name: "web", namespace: "shop", sectionName: "http" }, undefined, "web", 80, true],
  ["sectionName = an unnamed port's number", { kind: "MeshService", name: "web", namespace: "shop", sectionName: "8080" }, undefined, "web", 8080, true],
  ["sectionName of another port", { kind: "MeshService", name: "web", namespace: "shop", sectionName: "http" }, undefined, "web", 8080, false],
  ["sectionName, no port known", { kind: "MeshService", name: "web", namespace: "shop", sectionName: "http" }, undefined, "web", undefined, false],
  ["legacy <svc>_<ns>_svc_<port> on that port", { kind: "MeshService", name: "web_shop_svc_80" }, undefined, "web", 80, true],
  ["legacy name on another port", { kind: "MeshService", name: "web_shop_svc_80" }, undefined, "web", 8080, false],
  ["legacy name, no port known", { kind: "MeshService", name: "web_shop_svc_80" }, undefined, "web", undefined, false],
  ["legacy name with trailing junk", { kind: "MeshService", name: "web_shop_svc_80x" }, "shop", "web", 80, false],
  ["legacy name of another namespace", { kind: "MeshService", name: "web_other_svc_80" }, undefined, "web", 80, false],
  ["legacy name of another service", { kind: "MeshService", name: "api_shop_svc_80" }, undefined, "web", 80, false],
  ["legacy-looking name with a sectionName (plain name then)", { kind: "MeshService", name: "web_shop_svc_80", sectionName: "http" }, "shop", "web", 80, false],
  ["legacy-looking name on an external service (plain name then)", { kind: "MeshExternalService", name: "pay_billing_svc_443" }, "billing", "pay", 443, false],
];

for (const [what, ref, ns, svc, port, expected] of refCases) {
  test(`given ${svc}${port === undefined ? "" : `:${port}`}, when the ref is ${what}, then it ${expected ? "resolves" : "does not resolve"}`, (t) => {
    const policy = { type: "MeshHTTPRoute", mesh: "default", name: "r", ...(ns ? { k8sNamespace: ns } : {}) } as Policy;
    t.is(refResolvesTo(ref, policy, dest(services()[svc], port)), expected);
  });
}

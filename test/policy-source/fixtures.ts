// Documents and stand-in HTTP servers that the policy-source tests share (in-process tests and their process-level twins).
import type { ExecutionContext } from "ava";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A Dataplane with one inbound of `service` on 127.0.0.1:8080. */
export const dataplaneDoc = (name: string, service: string) => ({
  type: "Dataplane",
  mesh: "default",
  name,
  networking: { address: "127.0.0.1", inbound: [{ port: 8080, tags: { "kuma.io/service": service } }] },
});

/** A MeshTrafficPermission on `service`: deny everyone, then allow `allow`. */
export const serviceMtp = (name: string, service: string, allow: string) => ({
  type: "MeshTrafficPermission",
  mesh: "default",
  name,
  spec: {
    targetRef: { kind: "MeshService", name: service },
    from: [
      { targetRef: { kind: "Mesh" }, default: { action: "Deny" } },
      { targetRef: { kind: "MeshService", name: allow }, default: { action: "Allow" } },
    ],
  },
});

/** The SPIFFE ID the MeshIdentity's template (`{{ .Mesh }}.zone-1.mesh.local` + `/workload/{{ .Workload }}`) gives workload `w`. */
export const spiffeOf = (workload: string, trustDomain = "default.zone-1.mesh.local") => `spiffe://${trustDomain}/workload/${workload}`;

/** A 2.14 MeshTrafficPermission: the `app: orders` dataplanes allow workload `web` by its SPIFFE ID. */
export const allowWebToOrders = {
  type: "MeshTrafficPermission",
  mesh: "default",
  name: "orders-from-web",
  spec: { targetRef: { kind: "Dataplane", labels: { app: "orders" } }, rules: [{ default: { allow: [{ spiffeID: { type: "Exact", value: spiffeOf("web") } }] } }] },
};

/** A MeshTrust's CA bundle: PEM-shaped, never parsed as a certificate. */
export const TRUST_PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIRAOZ0\n-----END CERTIFICATE-----\n";

/** A server answering every request with `body(url)` as JSON; counts the requests. */
export async function serveJson(t: ExecutionContext, body: (url: URL) => unknown) {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body(url)));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

/** A server whose GET / answers `index` (a Kuma API root stand-in). */
export async function rootServer(t: { teardown(fn: () => Promise<void>): void }, index: unknown, status = 200): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(index));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

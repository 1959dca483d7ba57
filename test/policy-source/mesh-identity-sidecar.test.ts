// MeshIdentity and MeshTrust reach the sidecar from a control plane: a real sidecar against the real embedded
// control plane decides mTLS as Kuma 2.12+ does (identity → mTLS on and the MTP's SPIFFE rules apply; none with
// the Mesh's mTLS off → plaintext, no peer identity), keeps the last good version when a write is refused, and
// reverts on delete. From Kuma's REST lists, in process: mesh-identity-lists.test.ts.
import test from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestSidecar } from "../helpers/sidecar-harness.js";
import { call, controlPlaneFor, eventually, meshIdentity as identity } from "../control-plane/helpers.js";
import { allowWebToOrders, spiffeOf, TRUST_PEM } from "./fixtures.js";


const ordersDp = {
  type: "Dataplane",
  mesh: "default",
  name: "orders-1",
  labels: { app: "orders", "kuma.io/workload": "orders" },
  networking: { address: "127.0.0.1", inbound: [{ port: 8080, name: "http", tags: { "kuma.io/service": "orders" } }] },
};

interface Explained {
  decision: { explain: { action: string; kind: string; reason: string } };
  client: { source: string };
  proxy: { mtls: string; identity?: string; trustDomains?: string[] };
}

/** /explain for a request whose TLS peer certificate carries `uri` (Envoy's uri_san_peer_certificate). */
async function explain(adminUrl: string, uri: string): Promise<Explained> {
  const r = await fetch(`${adminUrl}/explain`, { method: "POST", body: JSON.stringify({ inbound: "http", client: { uriSans: [uri] } }) });
  return (await r.json()) as Explained;
}

test("mesh identity (sidecar) › a MeshIdentity written to the control plane turns mTLS on, a refused write changes nothing, deleting it reverts", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default", { type: "Mesh", name: "default" });
  await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${allowWebToOrders.name}`, allowWebToOrders);
  const dir = mkdtempSync(join(tmpdir(), "meshext-identity-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "dp.json"), JSON.stringify(ordersDp));
  const sidecar = await startTestSidecar(["--control-plane", cp.url, "--dataplane-file", join(dir, "dp.json"), "--mesh", "default"]);
  t.teardown(() => sidecar.stop());

  // given a Mesh with mTLS off and no MeshIdentity: plaintext inbound, so the certificate names nobody and MTP is inert
  t.true(await eventually(async () => (await explain(sidecar.adminUrl, spiffeOf("intruder"))).decision.explain.reason.includes("mTLS is off")));
  const plain = await explain(sidecar.adminUrl, spiffeOf("intruder"));
  t.is(plain.decision.explain.action, "allow");
  t.is(plain.client.source, "none", "no peer identity on a plaintext inbound");
  t.deepEqual(plain.proxy, { mtls: "off" });

  // when a MeshIdentity selecting orders is written: mTLS on, the MTP's SPIFFE rule decides
  t.is((await call(cp.url, "PUT", "/meshes/default/meshidentities/orders", identity("orders", { app: "orders" }))).status, 201);
  t.true(await eventually(async () => (await explain(sidecar.adminUrl, spiffeOf("intruder"))).decision.explain.action === "deny", 10_000));
  const web = await explain(sidecar.adminUrl, spiffeOf("web"));
  t.is(web.decision.explain.action, "allow");
  t.is(web.decision.explain.kind, "MeshTrafficPermission");
  t.is(web.client.source, "peer-cert");
  t.deepEqual(web.proxy, { mtls: "on", identity: "orders" });

  // and a MeshTrust limits peers to its trust domain (Kuma's SPIFFE validator refuses others in the handshake)
  const trust = { type: "MeshTrust", mesh: "default", name: "zone-1", spec: { trustDomain: "default.zone-1.mesh.local", caBundles: [{ type: "Pem", pem: { value: TRUST_PEM } }] } };
  await call(cp.url, "PUT", "/meshes/default/meshtrusts/zone-1", trust);
  t.true(await eventually(async () => (await explain(sidecar.adminUrl, spiffeOf("web", "default.zone-2.mesh.local"))).decision.explain.reason.includes("trust domain default.zone-2.mesh.local"), 10_000));
  t.is((await explain(sidecar.adminUrl, spiffeOf("web"))).decision.explain.action, "allow");
  t.deepEqual((await explain(sidecar.adminUrl, spiffeOf("web"))).proxy.trustDomains, ["default.zone-1.mesh.local"]);

  // when a malformed version is written, it is refused with violations and the stored one stays in force
  const bad = { ...identity("orders", { app: "orders" }), spec: { ...identity("orders", { app: "orders" }).spec, provider: { type: "Vault" } } };
  const refused = await call(cp.url, "PUT", "/meshes/default/meshidentities/orders", bad);
  t.is(refused.status, 400);
  t.deepEqual(refused.body.invalid_parameters, [{ field: "spec.provider.type", reason: '"Vault" must be one of ["Bundled", "Spire", "Extension"]' }]);
  t.is((await explain(sidecar.adminUrl, spiffeOf("intruder"))).decision.explain.action, "deny");

  // when it is deleted, the proxy is back to plaintext: everything allowed, no peer identity
  await call(cp.url, "DELETE", "/meshes/default/meshidentities/orders");
  t.true(await eventually(async () => (await explain(sidecar.adminUrl, spiffeOf("intruder"))).decision.explain.action === "allow", 10_000));
  t.is((await explain(sidecar.adminUrl, spiffeOf("intruder"))).client.source, "none");
});

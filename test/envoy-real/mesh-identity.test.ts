// MeshIdentity and MeshTrust from the embedded control plane decide real mTLS requests through a real Envoy: with the
// Mesh's mTLS off and no identity the inbound counts as plaintext (MTP inert, no peer identity); a MeshIdentity
// selecting the Dataplane turns mTLS on, so the MTP's SPIFFE rule lets only web's certificate in; a MeshTrust refuses
// a certificate of another trust domain; deleting the identity reverts.
import test, { type ExecutionContext } from "ava";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEnvoyStack } from "../helpers/envoy-stack.js";
import { BACKEND_DATAPLANE, waitSidecarReady } from "../helpers/envoy-policies.js";
import { which } from "../helpers/tools.js";
import { call, controlPlaneFor, eventually, meshIdentity } from "../control-plane/helpers.js";

const ID = (workload: string, trustDomain = "default.zone-1.mesh.local") => `spiffe://${trustDomain}/workload/${workload}`;
const CLIENTS = { web: ID("web"), orders: ID("orders"), far: ID("web", "default.zone-2.mesh.local") } as const;
type Client = keyof typeof CLIENTS;

const PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIRAOZ0\n-----END CERTIFICATE-----\n";

const allowWeb = {
  type: "MeshTrafficPermission",
  mesh: "default",
  name: "backend-from-web",
  spec: { targetRef: { kind: "Dataplane", labels: { app: "backend" } }, rules: [{ default: { allow: [CLIENTS.web, CLIENTS.far].map((value) => ({ spiffeID: { type: "Exact", value } })) } }] },
};

/** A CA, the server certificate and one client certificate per CLIENTS entry (SPIFFE IDs as a MeshIdentity issues them). */
function makeCerts(t: ExecutionContext): { dir: string; file(name: string): Buffer } | undefined {
  if (!which("openssl")) {
    t.log("skipped: openssl is not installed (scripts/gen-test-certs.sh needs it)");
    t.pass();
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), "meshext-identity-certs-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const extra = Object.entries(CLIENTS).map(([name, uri]) => `client-${name}=${uri}`);
  execFileSync("bash", [join(process.cwd(), "scripts", "gen-test-certs.sh"), dir, ...extra], { stdio: "ignore" });
  return { dir, file: (name) => readFileSync(join(dir, name)) };
}

test.serial("real envoy › MeshIdentity from the control plane turns mTLS on for MeshTrafficPermission, MeshTrust limits trust domains, delete reverts", async (t) => {
  const certs = makeCerts(t);
  if (!certs) return;
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default", { type: "Mesh", name: "default" });
  await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${allowWeb.name}`, allowWeb);
  const dpFile = join(certs.dir, "dataplane.yaml");
  writeFileSync(dpFile, BACKEND_DATAPLANE.replace("name: backend-1\n", "name: backend-1\nlabels: {app: backend}\n"));
  const tls = { certChain: join(certs.dir, "server.crt"), privateKey: join(certs.dir, "server.key"), trustedCa: join(certs.dir, "ca.crt") };
  const stack = await startEnvoyStack(t, { sidecarArgs: ["--control-plane", cp.url, "--dataplane-file", dpFile, "--mesh", "default"], tls });
  if (!stack) return;
  await waitSidecarReady(stack);
  const status = (client: Client) =>
    new Promise<number>((resolve, reject) => {
      const [cert, key] = [certs.file(`client-${client}.crt`), certs.file(`client-${client}.key`)];
      const req = httpsRequest({ host: "127.0.0.1", port: stack.inboundPort, path: "/", ca: certs.file("ca.crt"), cert, key, agent: false, headers: { connection: "close" } }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.setTimeout(20_000, () => req.destroy(new Error("no answer in 20s")));
      req.on("error", reject);
      req.end();
    });

  // given the Mesh's mTLS off and no MeshIdentity: MeshTrafficPermission does not apply, orders gets in
  t.is(await status("orders"), 200);
  t.is(await status("web"), 200);
  // when a MeshIdentity selecting backend is written, then its mTLS is on and the SPIFFE rule decides
  await call(cp.url, "PUT", "/meshes/default/meshidentities/backend", meshIdentity("backend", { app: "backend" }));
  t.true(await eventually(async () => (await status("orders")) === 403, 10_000), "orders denied once the identity is in force");
  t.is(await status("web"), 200);
  t.is(await status("far"), 200, "the rule allows web of both zones");
  // when a MeshTrust gives only zone-1's trust domain, then web of zone-2 is refused before the rule
  const trust = { type: "MeshTrust", mesh: "default", name: "zone-1", spec: { trustDomain: "default.zone-1.mesh.local", caBundles: [{ type: "Pem", pem: { value: PEM } }] } };
  await call(cp.url, "PUT", "/meshes/default/meshtrusts/zone-1", trust);
  t.true(await eventually(async () => (await status("far")) === 403, 10_000));
  t.is(await status("web"), 200);
  // when the MeshIdentity is deleted, then the proxy is back to plaintext semantics: orders gets in again
  await call(cp.url, "DELETE", "/meshes/default/meshidentities/backend");
  t.true(await eventually(async () => (await status("orders")) === 200, 10_000));
});

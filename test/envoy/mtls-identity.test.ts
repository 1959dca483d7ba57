// The mTLS variant end to end, Envoy excepted: certificates from scripts/gen-test-certs.sh, the ext_proc attributes
// envoy-mtls.yaml asks for (valued as Envoy's CEL would for that client certificate), the real sidecar with the
// demo policies (only `web` may call `backend`). Identity must come from the attribute, not from headers.
import test from "ava";
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../control-plane/helpers.js";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { startTestSidecar } from "../helpers/sidecar-harness.js";
import { samplePoliciesWithoutFaults } from "../policy-tools/run-cli.js";
import { ENVOY_DIR, ENVOY_MTLS_YAML, httpFilter, listener, readYaml, ROOT } from "./envoy-config.js";

/** What Envoy's CEL attribute `connection.uri_san_peer_certificate` holds: the peer certificate's first URI SAN. */
function firstUriSan(certPem: string): string {
  const uri = new X509Certificate(certPem).subjectAltName?.split(", ").find((san) => san.startsWith("URI:"));
  if (!uri) throw new Error("certificate without a URI SAN");
  return uri.slice("URI:".length);
}

/** The attributes envoy-mtls.yaml's inbound ext_proc requests, valued for a connection presenting `certPem`. */
function attributesFor(certPem: string): Record<string, unknown> {
  const names: string[] = httpFilter(listener(readYaml(ENVOY_MTLS_YAML), "inbound_8080"), "envoy.filters.http.ext_proc").request_attributes ?? [];
  const valueOf: Record<string, () => unknown> = {
    "connection.uri_san_peer_certificate": () => firstUriSan(certPem),
    // The SNI the client sent; our test clients send none, as curl to an IP does.
    "connection.requested_server_name": () => "",
  };
  return Object.fromEntries(names.map((name) => {
    if (!valueOf[name]) throw new Error(`this test cannot value attribute ${name}`);
    return [name, valueOf[name]!()];
  }));
}

function openssl(): string | undefined {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return undefined;
  } catch {
    return "openssl is not installed (scripts/gen-test-certs.sh needs it)";
  }
}

test("envoy › mTLS: the client certificate's SPIFFE ID, sent as envoy-mtls.yaml's ext_proc attribute, is the identity the sidecar decides on", async (t) => {
  const missing = openssl();
  if (missing) {
    t.log(`skipped: ${missing}`);
    t.pass();
    return;
  }
  // Given throwaway certificates from the repo's script, and the real sidecar with the demo policies
  const certs = mkdtempSync(join(tmpdir(), "meshext-certs-"));
  t.teardown(() => rmSync(certs, { recursive: true, force: true }));
  execFileSync(join(ROOT, "scripts", "gen-test-certs.sh"), [certs], { stdio: "ignore" });
  const client = readFileSync(join(certs, "client.crt"), "utf8");
  const server = readFileSync(join(certs, "server.crt"), "utf8");
  // (the demo policies without their MeshFaultInjection: its 5 % abort of web would fail the 200 below one run in twenty)
  const policies = samplePoliciesWithoutFaults(join(certs, "policies"));
  const h = await startTestSidecar(["--policies", policies, "--dataplane-file", join(ENVOY_DIR, "dataplane.yaml")]);
  t.teardown(() => h.stop());
  const envoyFor = (requestAttributes: Record<string, unknown>) => {
    // (this test is about identity, not latency: a message timeout well above Envoy's 200 ms default keeps a machine
    // loaded by other work from turning a slow first answer into Envoy's 504)
    const envoy = new EnvoyExtProcClient(h.grpcAddress, { requestAttributes, initialMetadata: { "x-meshext-direction": "inbound" }, messageTimeoutMs: 5000 });
    t.teardown(() => envoy.close());
    return envoy;
  };
  // (policies load asynchronously from the directory: the sidecar's /ready turns 200 once they are in force)
  t.true(await eventually(async () => (await fetch(`${h.adminUrl}/ready`)).status === 200, 30_000, 50), "the sidecar became ready");

  // When the `web` client certificate's attributes come with the request
  const web = await envoyFor(attributesFor(client)).request({});
  // Then it is allowed: MeshTrafficPermission saw kuma.io/service=web
  t.deepEqual(attributesFor(client), { "connection.uri_san_peer_certificate": "spiffe://default/web", "connection.requested_server_name": "" });
  t.is(web.status, 200);

  // When another certificate (the server's: spiffe://default/backend) is presented, or no attributes arrive
  const backend = await envoyFor(attributesFor(server)).request({});
  const none = await envoyFor({}).request({});
  // Then both are denied: the identity is the certificate's, and nothing else stands in for it
  t.is(backend.status, 403);
  t.is(none.status, 403);
  // And a header claiming to be web does not help without the attribute (x-forwarded-client-cert is Envoy's to
  // strip or set: forward_client_cert_details SANITIZE_SET)
  const spoof = await envoyFor({}).request({ headers: [["x-kuma-tags", "&kuma.io/service=web&"]] });
  t.is(spoof.status, 403);
});

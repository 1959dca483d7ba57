// The kumactl-style commands through the real binary against a real control plane and a real sidecar (in
// process): get policies/dataplanes as table, JSON, YAML; inspect dataplane as a rules table; explain; policy
// apply with and without --dry-run; unreachable servers, unknown names and bad arguments.
import test from "ava";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:net";
import { parse } from "yaml";
import { call, controlPlaneFor, dataplane } from "../control-plane/helpers.js";
import { startTestSidecar } from "../helpers/sidecar-harness.js";
import { meshext, ROOT, samplePoliciesWithoutFaults } from "./run-cli.js";

const POLICIES = join(ROOT, "envoy", "policies");

async function seeded(t: Parameters<typeof controlPlaneFor>[0]): Promise<string> {
  const { cp } = await controlPlaneFor(t);
  const applied = await meshext(["policy", "apply", POLICIES, "--control-plane", cp.url]);
  if (applied.code !== 0) throw new Error(applied.stdout + applied.stderr);
  await call(cp.url, "PUT", "/meshes/default/dataplanes/backend-1", { ...dataplane("backend-1", "backend"), networking: { address: "127.0.0.1", inbound: [{ port: 8080, tags: { "kuma.io/service": "backend", "kuma.io/protocol": "http", version: "v1" } }] } });
  return cp.url;
}

test("get › policies and dataplanes as tables, JSON and YAML", async (t) => {
  const url = await seeded(t);
  const policies = await meshext(["get", "policies", "--control-plane", url]);
  t.is(policies.code, 0, policies.stderr);
  t.regex(policies.stdout, /^MESH +KIND +NAME +TARGETREF +ORIGIN +AGE$/m);
  t.regex(policies.stdout, /^default +MeshTrafficPermission +backend-allow-web +MeshService backend +- +\d+s$/m);
  t.regex(policies.stdout, /^default +MeshTrafficPermission +demo-app-from-shop +Dataplane demo-app-1 /m);
  t.is(policies.stdout.trim().split("\n").length, 1 + 5);
  const json = JSON.parse((await meshext(["get", "meshratelimits", "-m", "default", "-o", "json", "--control-plane", url])).stdout);
  t.is(json.total, 1);
  t.is(json.items[0].name, "backend-rate-limit");
  const dps = await meshext(["get", "dataplanes", "-o", "yaml", "--control-plane", url]);
  t.is(parse(dps.stdout).items[0].name, "backend-1");
  const table = await meshext(["get", "dataplanes", "--control-plane", url]);
  t.regex(table.stdout, /^default +backend-1 +127\.0\.0\.1 +backend:8080 /m);
  const other = await meshext(["get", "policies", "-m", "other", "--control-plane", url]);
  t.is(other.stdout, "no policies in mesh other\n");
});

test("inspect › a dataplane's rules as a table: inbound, kind, for whom, conf summary, origin", async (t) => {
  const url = await seeded(t);
  const r = await meshext(["inspect", "dataplane", "backend-1", "--control-plane", url]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /^INBOUND +KIND +FOR +CONF +ORIGIN$/m);
  t.regex(r.stdout, /^:8080 \(backend\) +MeshTrafficPermission +from kuma\.io\/service=web +Allow +backend-allow-web$/m);
  t.regex(r.stdout, /^:8080 \(backend\) +MeshTrafficPermission +from !kuma\.io\/service=web +Deny +backend-allow-web$/m);
  t.regex(r.stdout, /^:8080 \(backend\) +MeshRateLimit +from \* +50 requests per 1s +backend-rate-limit$/m);
  t.regex(r.stdout, /^:8080 \(backend\) +MeshFaultInjection +from kuma\.io\/service=web +abort 503 at 5%; delay 100ms at 10% +backend-chaos$/m);
  t.regex(r.stdout, /^outbound +MeshHTTPRoute +to kuma\.io\/service=payments +PathPrefix \/api → RequestHeaderModifier, ResponseHeaderModifier +backend-to-payments$/m);
  const json = JSON.parse((await meshext(["inspect", "dataplane", "backend-1", "-o", "json", "--control-plane", url])).stdout);
  t.like(json.resource, { type: "Dataplane", name: "backend-1" });
  const missing = await meshext(["inspect", "dataplane", "nope", "--control-plane", url]);
  t.is(missing.code, 1);
  t.regex(missing.stderr, /dataplane default\/nope: .*404 Could not retrieve Dataplane/);
});

test("policy apply › --dry-run stores nothing and names the dataplanes each policy selects; without it, stores", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default/dataplanes/backend-1", dataplane("backend-1", "backend"));
  const dry = await meshext(["policy", "apply", "--dry-run", join(POLICIES, "traffic-permission.yaml"), "--control-plane", cp.url]);
  t.is(dry.code, 0, dry.stderr);
  t.regex(dry.stdout, /^MeshTrafficPermission default\/backend-allow-web: valid, would be created; selects 1 dataplane\(s\): backend-1$/m);
  t.regex(dry.stdout, /^1 of 1 policy valid \(dry run: nothing stored\)$/m);
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions")).body.total, 0);
  const real = await meshext(["policy", "apply", join(POLICIES, "traffic-permission.yaml"), "--control-plane", cp.url]);
  t.is(real.code, 0);
  t.regex(real.stdout, /backend-allow-web: created/);
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions")).body.total, 1);
});

test("explain › a request described on the command line, answered by a running sidecar", async (t) => {
  // (the sample policies without their random faults, so that every decision is the MeshTrafficPermission's)
  const dir = mkdtempSync(join(tmpdir(), "meshext-explain-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const harness = await startTestSidecar(["--policies", samplePoliciesWithoutFaults(join(dir, "policies")), "--dataplane-file", join(ROOT, "envoy", "dataplane.yaml")]);
  t.teardown(() => harness.stop());
  const web = await meshext(["explain", "POST", "/orders", "--spiffe-id", "spiffe://default/web", "--admin", harness.adminUrl]);
  t.is(web.code, 0, web.stderr);
  t.regex(web.stdout, /^decision: allow by MeshTrafficPermission backend-allow-web from\[1\]$/m);
  t.regex(web.stdout, /^client: {3}kuma\.io\/service=web \(from described\)$/m);
  const billing = await meshext(["explain", "/", "--tags", "kuma.io/service=billing", "--admin", harness.adminUrl]);
  t.regex(billing.stdout, /^decision: deny \(local reply 403\) by MeshTrafficPermission backend-allow-web from\[0\]$/m);
  const out = await meshext(["explain", "/api/charge", "--outbound", "--authority", "payments", "-H", "x-debug: 1", "--admin", harness.adminUrl]);
  t.regex(out.stdout, /^request header set x-caller: backend$/m);
  t.regex(out.stdout, /^response header set cache-control: no-store$/m);
  const json = JSON.parse((await meshext(["explain", "/", "--tags", "kuma.io/service=web", "-o", "json", "--admin", harness.adminUrl])).stdout);
  t.is(json.decision.explain.policy, "backend-allow-web");
});

test("REST commands › unreachable servers exit 1 with the reason; bad arguments exit 2", async (t) => {
  const port = await closedPort();
  const down = await meshext(["get", "policies", "--control-plane", `http://127.0.0.1:${port}`]);
  t.is(down.code, 1);
  t.regex(down.stderr, new RegExp(`^meshext get: cannot reach http://127\\.0\\.0\\.1:${port}/meshes/default/meshtrafficpermissions: ECONNREFUSED$`, "m"));
  const noSidecar = await meshext(["explain", "/", "--admin", `http://127.0.0.1:${port}`]);
  t.is(noSidecar.code, 1);
  t.regex(noSidecar.stderr, /cannot reach/);
  for (const [args, message] of [
    [["get"], /say what to get/],
    [["get", "pods"], /cannot get "pods"/],
    [["inspect", "mesh", "x"], /expected: dataplane NAME/],
    [["explain"], /expected \[METHOD\] PATH/],
    [["explain", "/", "-H", "no-colon"], /--header: "no-colon" is not 'name: value'/],
    [["get", "policies", "--control-plane", "ftp://x"], /--control-plane: expected an http/],
    [["policy"], /missing subcommand/],
    [["policy", "frobnicate"], /unknown subcommand "frobnicate"/],
  ] as const) {
    const r = await meshext(args);
    t.is(r.code, 2, args.join(" "));
    t.regex(r.stderr, message);
  }
});

/** A local port nothing listens on (just closed). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// The dataplane lifecycle client against the embedded control plane (heartbeats) and a Kuma-like server (none).
import test from "ava";
import { silentLogger } from "../../extproc/log.js";
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import { createDataplaneClient } from "../../extproc/policy-source/dataplane-client.js";
import { dataplaneIdentity, localDataplane } from "../../extproc/policy-source/from-config.js";
import { call, eventually, startTestControlPlane, tempDir } from "../control-plane/helpers.js";
import { startFakeKuma } from "./fake-kuma.js";

const identity = { mesh: "default", name: "web-1", address: "127.0.0.1", tags: { "kuma.io/service": "web", version: "v1" } };
const DP = "/meshes/default/dataplanes/web-1";

test("dataplane-client › registers online, heartbeats, reports draining, and deregisters so it is gone", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path, { offlineTimeoutMs: 1500 });
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const client = createDataplaneClient({ baseUrl: cp.url, dataplane: identity, heartbeatIntervalMs: 100, log: silentLogger() });
  t.teardown(() => client.stop());
  await client.register();
  const registered = await call(cp.url, "GET", DP);
  t.is(registered.body.status.state, "online");
  t.deepEqual(registered.body.networking.inbound[0].tags, identity.tags);
  await new Promise((r) => setTimeout(r, 2500)); // well past the offline timeout: heartbeats keep it online
  t.is((await call(cp.url, "GET", DP)).body.status.state, "online");
  await client.markDraining();
  t.is((await call(cp.url, "GET", DP)).body.status.state, "draining");
  await client.deregister();
  t.is((await call(cp.url, "GET", DP)).status, 404);
});

test("dataplane-client › registers again when the control plane forgot the dataplane", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const client = createDataplaneClient({ baseUrl: cp.url, dataplane: identity, heartbeatIntervalMs: 100, log: silentLogger() });
  t.teardown(() => client.stop());
  await client.register();
  await call(cp.url, "DELETE", DP); // e.g. garbage-collected while the sidecar was partitioned away
  t.true(await eventually(async () => (await call(cp.url, "GET", DP)).status === 200));
});

test("dataplane-client › against Kuma (no heartbeat endpoint) draining is a PUT with every inbound NotReady", async (t) => {
  const kuma = await startFakeKuma();
  t.teardown(() => kuma.close());
  const client = createDataplaneClient({ baseUrl: kuma.url, dataplane: identity, heartbeatIntervalMs: 50, log: silentLogger() });
  t.teardown(() => client.stop());
  await client.register();
  t.true(await eventually(() => kuma.requests.some((r) => r.endsWith("/_heartbeat"))));
  await client.markDraining();
  const dp = kuma.dataplanes.get("default/web-1") as { networking: { inbound: Array<{ state?: string }> } };
  t.is(dp.networking.inbound[0]!.state, "NotReady");
  const heartbeats = kuma.requests.filter((r) => r.endsWith("/_heartbeat")).length;
  await new Promise((r) => setTimeout(r, 300));
  t.is(kuma.requests.filter((r) => r.endsWith("/_heartbeat")).length, heartbeats, "heartbeats stopped");
  await client.deregister();
  t.false(kuma.dataplanes.has("default/web-1"));
});

test("dataplane-client › the registered tags are the --dataplane-tags the engine reads; a pair without = is refused", (t) => {
  const config = (tags: string) => loadSidecarConfig(["--dataplane-name", "web-1", "--dataplane-tags", tags], {}).config;
  const ok = config("kuma.io/service=web, version=v1");
  t.deepEqual(dataplaneIdentity(ok, localDataplane(ok)).tags, { "kuma.io/service": "web", version: "v1" });
  const bad = config("kuma.io/service=web,oops");
  t.throws(() => localDataplane(bad), { message: /not key=value/ });
});

// The generated bootstrap in a real Envoy: a request through the inbound listener is decided by the real sidecar.
import test from "ava";
import { join } from "node:path";
import { eventually } from "../control-plane/helpers.js";
import { installStackDrain } from "../helpers/envoy-drain.js";
import { startEnvoyStack } from "../helpers/envoy-stack.js";

const POLICIES = join(process.cwd(), "envoy", "policies");
const DATAPLANE = join(process.cwd(), "envoy", "dataplane.yaml");

test("real envoy › the demo policies deny a request without identity through Envoy, with Envoy's 403", async (t) => {
  // Given the demo policies (mTLS mesh: only web may call backend) behind a real Envoy
  const stack = await startEnvoyStack(t, { sidecarArgs: ["--policies", POLICIES, "--dataplane-file", DATAPLANE] });
  if (!stack) return;
  // When a client without a certificate calls the inbound listener
  const res = await fetch(`${stack.inboundUrl}/`);
  // Then Envoy answers 403 from the sidecar's decision, and the app never saw it
  t.is(res.status, 403);
  t.is(res.headers.get("server"), "envoy");
  await res.text();
  t.is(stack.app.served, 0);
});

test("real envoy › the wasm filter polls the sidecar's /drain and, once the sidecar drains, answers the health path 503", async (t) => {
  // Given the real data plane, serving
  const stack = await startEnvoyStack(t, { sidecarArgs: ["--policies", POLICIES, "--dataplane-file", DATAPLANE] });
  if (!stack) return;
  const drain = installStackDrain(stack, { envoyAdmin: stack.envoy.adminUrl });
  const health = async () => {
    const res = await fetch(`${stack.inboundUrl}/meshext/health`);
    await res.text();
    return res.status;
  };
  t.is(await health(), 200);
  t.true(await eventually(async () => ((await stack.envoy.stats("meshext_drain_poll_successes")).get("wasmcustom.meshext_drain_poll_successes_total") ?? 0) > 0, 10_000, 100), "the filter's poll reached the sidecar's /drain");
  // When the sidecar starts draining
  void drain.start("test");
  // Then the filter learns it on its next poll and the health path answers 503
  t.true(await eventually(async () => (await health()) === 503, 10_000, 100), "health 503 while draining");
});

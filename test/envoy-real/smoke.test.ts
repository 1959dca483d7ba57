// The generated bootstrap in a real Envoy: a request through the inbound listener is decided by the real sidecar.
import test from "ava";
import { join } from "node:path";
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

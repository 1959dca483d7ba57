// The ext_proc close pattern through a real Envoy: 64 HTTP/1.1 keep-alive clients through the inbound listener, the
// sidecar (a child process, as in a pod) deciding each request. Envoy's graceful ext_proc close (the generated
// bootstrap's runtime flag) with the sidecar's rotation off loses nothing; `node dist/bench/envoy-close-pattern.js`
// measures the other settings (README, "Envoy's default close vs Node's HTTP/2 rapid-reset limit").
import test from "ava";
import { http1Load } from "../../bench/http1-load.js";
import { startChildSidecar } from "../helpers/child-sidecar.js";
import { startEnvoyStack } from "../helpers/envoy-stack.js";
import { freePort } from "../helpers/prometheus.js";

test("real envoy › close pattern: 10 000 requests at 64 in flight with Envoy's graceful ext_proc close and no rotation all succeed", async (t) => {
  t.timeout(120_000);
  // Given the generated bootstrap (ext_proc_graceful_grpc_close on) and a sidecar that never rotates its connection.
  // The child sidecar gets the stack's message timeout (STACK_MESSAGE_TIMEOUT_MS, not the shipped 200 ms).
  const [grpcPort, adminPort] = [await freePort(), await freePort()];
  const sidecar = await startChildSidecar(grpcPort, adminPort, ["--message-timeout", "2s", "--max-streams-per-connection", "0"]);
  t.teardown(() => void sidecar.kill("SIGKILL"));
  const stack = await startEnvoyStack(t, {
    sidecarAddresses: { grpc: `127.0.0.1:${grpcPort}`, admin: `127.0.0.1:${adminPort}` },
  });
  if (!stack) return;
  t.regex(stack.bootstrapYaml, /envoy\.reloadable_features\.ext_proc_graceful_grpc_close: true/);
  // When 64 keep-alive clients send 10 000 requests through Envoy
  const result = await http1Load(`${stack.inboundUrl}/`, 10_000, 64);
  t.log(`${result.requests} requests in ${result.elapsedMs} ms: ${JSON.stringify(Object.fromEntries(result.statuses))}`);
  // Then every one is answered 200 by the app, over one gRPC connection that Envoy never saw fail
  t.is(result.failed, 0);
  t.is(stack.app.served, 10_000);
  const cluster = await stack.envoy.stats("^cluster\\.meshext_sidecar\\.upstream_cx_(total|protocol_error)$");
  t.is(cluster.get("cluster.meshext_sidecar.upstream_cx_protocol_error"), 0);
  t.is(cluster.get("cluster.meshext_sidecar.upstream_cx_total"), 1);
});

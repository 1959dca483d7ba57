// A control plane that accepts connections but never answers must not keep the sidecar's ports closed:
// gRPC and admin answer at once, requests are decided per --before-first-sync until a set is loaded.
import test from "ava";
import { createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { startTestSidecar } from "../helpers/sidecar-harness.js";

/** Accepts TCP connections and never writes a byte. */
async function silentServer(t: import("ava").ExecutionContext): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

for (const beforeFirstSync of ["deny", "allow"] as const) {
  test(`silent control plane › ports answer at once, requests get the --before-first-sync=${beforeFirstSync} answer`, async (t) => {
    const url = await silentServer(t);
    // when the sidecar starts against it
    const startedAt = Date.now();
    const h = await startTestSidecar(["--control-plane", url, "--before-first-sync", beforeFirstSync, "--dataplane-tags", "kuma.io/service=backend"]);
    t.teardown(() => h.stop());
    const startMs = Date.now() - startedAt;
    // then both ports are up at once: well inside the control-plane request timeout (10 s) that used to hold them
    t.true(startMs < 5000, `sidecar started after ${startMs}ms`);
    const ready = await fetch(`${h.adminUrl}/ready`);
    t.is(ready.status, 503);
    t.regex(await ready.text(), /no policy set loaded yet/);
    const envoy = new EnvoyExtProcClient(h.grpcAddress, { messageTimeoutMs: 3000 });
    t.teardown(() => envoy.close());
    const outcome = await envoy.request({}, () => ({ status: 200 }));
    t.is(outcome.status, beforeFirstSync === "deny" ? 503 : 200);
  });
}

// The Envoy admin client's edges: a call with no time left makes no attempt, and an answer cut off mid-body
// fails the call at once (not at its deadline). In process, against loopback HTTP servers.
import test from "ava";
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { EnvoyAdminClient, type EnvoyAdminCall } from "../../extproc/drain/envoy-admin.js";
import { FakeEnvoyAdmin } from "../helpers/fake-envoy-admin.js";

/** A loopback HTTP server answering with `handler`, closed when the test ends. */
async function server(t: { teardown(fn: () => Promise<void>): void }, handler: RequestListener): Promise<string> {
  const s = createServer(handler);
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  t.teardown(async () => {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  });
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

test("envoy admin edges › given no time for the call, when it is made, then no request is sent and it fails as such, reported once", async (t) => {
  const envoy = await FakeEnvoyAdmin.start();
  t.teardown(() => envoy.close());
  const failures: EnvoyAdminCall[] = [];
  const client = new EnvoyAdminClient({ baseUrl: envoy.url, callTimeoutMs: 0, onFailure: (call) => failures.push(call) });
  await t.throwsAsync(() => client.failHealthchecks(), { message: "Envoy admin POST /healthcheck/fail: no attempt made" });
  t.deepEqual(envoy.calls, []);
  t.deepEqual(failures, ["healthcheck_fail"]);
});

test("envoy admin edges › given an Envoy whose answer is cut off mid-body, when stats are read, then the call fails with the cut, before its deadline", async (t) => {
  // given an answer that promises 100 bytes, sends 3 and closes the connection once they are out
  const url = await server(t, (_req, res) => {
    res.writeHead(200, { "content-length": "100" });
    res.write("{\"s", () => res.socket?.destroy());
  });
  const client = new EnvoyAdminClient({ baseUrl: url, callTimeoutMs: 3000 });
  await t.throwsAsync(() => client.downstreamRequestsActive("inbound"), { message: /^Envoy admin GET \/stats\?format=json&filter=\S+: aborted$/ });
});

// meshext run's quiesce before it stops Envoy, against the stand-in Envoy admin: the inbound listeners stop at
// once, the stop waits for the inbound requests in flight to end, never past its budget, and never fails.
import test from "ava";
import { EnvoyAdminClient } from "../../extproc/drain/envoy-admin.js";
import { quiesceEnvoy } from "../../extproc/envoy-run/quiesce.js";
import { FakeEnvoyAdmin } from "../helpers/fake-envoy-admin.js";

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const envoy = await FakeEnvoyAdmin.start();
  t.teardown(() => envoy.close());
  return { envoy, client: new EnvoyAdminClient({ baseUrl: envoy.url, callTimeoutMs: 400, backoffMs: 20 }) };
}

test("quiesce › stops the inbound listeners at once, then waits until no inbound request is in flight", async (t) => {
  // Given an Envoy with 2 inbound requests in flight that end 150 ms from now
  const { envoy, client } = await setup(t);
  envoy.downstreamRqActive = 2;
  setTimeout(() => (envoy.downstreamRqActive = 0), 150);
  // When meshext run quiesces it
  const result = await quiesceEnvoy(client, "inbound", 2000);
  // Then the listeners were stopped first (not gracefully) and the wait ended with the last request
  t.is(envoy.calls[0]!.url, "/drain_listeners?inboundonly");
  t.is(result.inflight, 0);
  t.true(result.waitedMs >= 140 && result.waitedMs < 1500, `waited ${result.waitedMs} ms`);
});

test("quiesce › a request that outlasts the budget ends the wait at the budget", async (t) => {
  // Given a request in flight that never ends
  const { envoy, client } = await setup(t);
  envoy.downstreamRqActive = 1;
  // When quiescing with a 200 ms budget
  const result = await quiesceEnvoy(client, "inbound", 200);
  // Then the wait ends after about 200 ms, reporting the request still in flight
  t.is(result.inflight, 1);
  t.true(result.waitedMs >= 200 && result.waitedMs < 1000, `waited ${result.waitedMs} ms`);
});

test("quiesce › an Envoy admin that fails does not hold the stop", async (t) => {
  // Given an admin answering 503 to everything
  const { envoy, client } = await setup(t);
  envoy.mode = "fail";
  // When quiescing
  const result = await quiesceEnvoy(client, "inbound", 5000);
  // Then it returns within the admin client's own deadline, the in-flight count unknown
  t.is(result.inflight, undefined);
  t.true(result.waitedMs < 1500, `waited ${result.waitedMs} ms`);
});

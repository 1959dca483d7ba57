// The Envoy admin client against the stand-in Envoy admin: calls, retries, deadlines, stats.
import test from "ava";
import { EnvoyAdminClient, statValue, type EnvoyAdminCall } from "../../extproc/drain/envoy-admin.js";
import { FakeEnvoyAdmin } from "../helpers/fake-envoy-admin.js";

async function setup(t: { teardown(fn: () => Promise<void>): void }, callTimeoutMs = 1000) {
  const envoy = await FakeEnvoyAdmin.start();
  t.teardown(() => envoy.close());
  const failures: EnvoyAdminCall[] = [];
  const client = new EnvoyAdminClient({ baseUrl: envoy.url + "/", callTimeoutMs, backoffMs: 20, onFailure: (call) => failures.push(call) });
  return { envoy, client, failures };
}

test("drain › envoy admin: failHealthchecks POSTs /healthcheck/fail once when Envoy answers", async (t) => {
  const { envoy, client, failures } = await setup(t);
  await client.failHealthchecks();
  t.deepEqual(envoy.callNames(), ["POST /healthcheck/fail"]);
  t.deepEqual(failures, []);
});

test("drain › envoy admin: drainListeners asks for a graceful drain of inbound listeners only", async (t) => {
  const { envoy, client } = await setup(t);
  await client.drainListeners();
  t.is(envoy.calls[0]!.url, "/drain_listeners?graceful&inboundonly");
});

test("drain › envoy admin: a failing Envoy is retried briefly, then reported once", async (t) => {
  const { envoy, client, failures } = await setup(t);
  envoy.mode = "fail";
  await t.throwsAsync(() => client.failHealthchecks(), { message: /healthcheck\/fail: HTTP 503/ });
  t.is(envoy.calls.length, 3);
  t.deepEqual(failures, ["healthcheck_fail"]);
});

test("drain › envoy admin: a hanging Envoy fails the call within its deadline", async (t) => {
  const { envoy, client, failures } = await setup(t, 400);
  envoy.mode = "hang";
  const t0 = Date.now();
  await t.throwsAsync(() => client.failHealthchecks(), { message: /no answer within/ });
  const ms = Date.now() - t0;
  t.true(ms >= 350 && ms < 1500, `gave up after ${ms}ms`);
  t.deepEqual(failures, ["healthcheck_fail"]);
});

test("drain › envoy admin: an unreachable Envoy fails fast", async (t) => {
  const { envoy } = await setup(t);
  const url = envoy.url;
  await envoy.close();
  const client = new EnvoyAdminClient({ baseUrl: url, callTimeoutMs: 1000, backoffMs: 10 });
  await t.throwsAsync(() => client.failHealthchecks(), { message: /ECONNREFUSED/ });
});

test("drain › envoy admin: downstreamRequestsActive reads http.<prefix>.downstream_rq_active", async (t) => {
  const { envoy, client } = await setup(t);
  envoy.statPrefix = "localhost_8080";
  envoy.downstreamRqActive = 4;
  t.is(await client.downstreamRequestsActive("localhost_8080"), 4);
  const sent = new URL(envoy.calls[0]!.url, "http://x");
  t.is(sent.searchParams.get("format"), "json");
  t.is(sent.searchParams.get("filter"), "^http\\.localhost_8080\\.downstream_rq_active$");
});

test("drain › envoy admin: downstreamRequestsActive is undefined when the stat prefix is wrong", async (t) => {
  const { client } = await setup(t);
  t.is(await client.downstreamRequestsActive("no_such_listener"), undefined);
});

test("drain › envoy admin: statValue ignores other stats and histogram entries", (t) => {
  const body = JSON.stringify({
    stats: [{ name: "http.inbound.downstream_rq_active_x", value: 9 }, { histograms: {} }, { name: "http.inbound.downstream_rq_active", value: 2 }],
  });
  t.is(statValue(body, "http.inbound.downstream_rq_active"), 2);
  t.throws(() => statValue("not json", "x"), { message: /non-JSON/ });
});

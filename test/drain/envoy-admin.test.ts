// The Envoy admin client against the stand-in Envoy admin: calls, retries, deadlines, stats.
import test from "ava";
import { EnvoyAdminClient, statValue, type EnvoyAdminCall, type EnvoyAdminOptions } from "../../extproc/drain/envoy-admin.js";
import { FakeEnvoyAdmin } from "../helpers/fake-envoy-admin.js";

/** A stand-in Envoy admin and a client of it (1 s per call, 20 ms backoff unless `options` say otherwise). */
async function setup(t: { teardown(fn: () => Promise<void>): void }, options: Pick<EnvoyAdminOptions, "callTimeoutMs" | "attempts" | "backoffMs"> = {}) {
  const envoy = await FakeEnvoyAdmin.start();
  t.teardown(() => envoy.close());
  const failures: EnvoyAdminCall[] = [];
  const client = new EnvoyAdminClient({ baseUrl: envoy.url + "/", callTimeoutMs: 1000, backoffMs: 20, ...options, onFailure: (call) => failures.push(call) });
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
  const { envoy, client, failures } = await setup(t, { callTimeoutMs: 400 });
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

test("drain › envoy admin: each call sends its own method and path, with Connection: close", async (t) => {
  const { envoy, client } = await setup(t);
  await client.drainListenersForever();
  await client.stopInboundListeners();
  await client.quit();
  await client.downstreamRequestsActive("inbound");
  t.deepEqual(envoy.calls.map((c) => `${c.method} ${c.url.split("&filter=")[0]}`), [
    "POST /drain_listeners?inboundonly&graceful&skip_exit",
    "POST /drain_listeners?inboundonly",
    "POST /quitquitquit",
    "GET /stats?format=json",
  ]);
  t.true(envoy.calls.every((c) => c.connection === "close"), "no keep-alive holds the process open");
});

test("drain › envoy admin: a base URL's trailing slashes are dropped", async (t) => {
  const { envoy } = await setup(t);
  await new EnvoyAdminClient({ baseUrl: `${envoy.url}//` }).failHealthchecks();
  t.deepEqual(envoy.callNames(), ["POST /healthcheck/fail"]);
});

test("drain › envoy admin: a 5xx is asked again and can succeed; a 3xx or 4xx fails at once, its body (trimmed, at most 200 characters) in the error", async (t) => {
  const { envoy, client, failures } = await setup(t);
  envoy.statuses = [500, 200];
  await client.failHealthchecks();
  t.is(envoy.calls.length, 2);
  for (const status of [404, 300]) {
    envoy.calls.length = 0;
    envoy.statuses = [status, 200];
    envoy.statusBody = `  ${"x".repeat(300)}\n`;
    const err = await t.throwsAsync(() => client.quit());
    t.is(err?.message, `Envoy admin POST /quitquitquit: HTTP ${status}: ${"x".repeat(198)}`);
    t.is(envoy.calls.length, 1, `${status} is not asked again`);
  }
  t.deepEqual(failures, ["quit", "quit"]);
});

test("drain › envoy admin: retries pause the backoff, doubled each time, and not after the last attempt", async (t) => {
  // A backoff long enough that a loaded machine's timer lateness (up to ~200 ms seen) cannot pass for a doubling:
  // the pauses are 300 ms then 600 ms, and a pause after the third attempt would be 1 200 ms.
  const backoffMs = 300;
  const { envoy, client } = await setup(t, { attempts: 3, backoffMs, callTimeoutMs: 5000 });
  envoy.mode = "fail";
  const t0 = Date.now();
  await t.throwsAsync(() => client.failHealthchecks(), { message: /HTTP 503: unavailable$/ });
  const elapsedMs = Date.now() - t0;
  const [first, second, third] = envoy.calls.map((c) => c.atMs);
  t.true(second! - first! >= backoffMs - 10 && second! - first! < 2 * backoffMs - 10, `first pause ${second! - first!} ms`);
  t.true(third! - second! >= 2 * backoffMs - 10, `second pause ${third! - second!} ms`);
  t.true(elapsedMs < third! - t0 + 2 * backoffMs, `no pause after the last attempt (${elapsedMs - (third! - t0)} ms after it)`);
});

test("drain › envoy admin: a pause longer than the call's deadline is cut to it, and no attempt starts past it", async (t) => {
  const { envoy, client } = await setup(t, { attempts: 3, backoffMs: 2000, callTimeoutMs: 400 });
  envoy.mode = "fail";
  const t0 = Date.now();
  await t.throwsAsync(() => client.failHealthchecks(), { message: /HTTP 503: unavailable$/, instanceOf: Error });
  // (the uncut pause alone would take 2 000 ms: a bound well under it, and far above a loaded machine's timer lateness)
  t.true(Date.now() - t0 < 1600, `gave up after ${Date.now() - t0} ms`);
  t.is(envoy.calls.length, 1);
});

test("drain › envoy admin: an https base URL speaks TLS (a plain HTTP server there fails the handshake)", async (t) => {
  const { envoy } = await setup(t);
  const client = new EnvoyAdminClient({ baseUrl: envoy.url.replace("http:", "https:"), attempts: 1, callTimeoutMs: 1000 });
  await t.throwsAsync(() => client.failHealthchecks(), { message: /SSL|TLS|EPROTO|wrong version/i });
  t.deepEqual(envoy.callNames(), []);
});

test("drain › envoy admin: statValue answers undefined for a body without a stats list or a stat that is not a number", (t) => {
  for (const body of ["{}", '{"stats":5}', '{"stats":[null,{"name":"x","value":"3"}]}']) t.is(statValue(body, "x"), undefined, body);
  const err = t.throws(() => statValue(`<html>${"x".repeat(300)}`, "x"));
  t.is(err?.message, `Envoy /stats?format=json answered non-JSON: <html>${"x".repeat(94)}`);
});

test("drain › envoy admin: each listener drain that fails is reported as the drain_listeners call, with its error naming the path", async (t) => {
  // Given an Envoy whose admin fails every call, and a client that tries once
  const { envoy, client, failures } = await setup(t, { attempts: 1 });
  envoy.mode = "fail";
  // When the graceful drain, the drain-forever and the stop of inbound listeners are each asked for
  const errors = [];
  for (const call of [() => client.drainListeners(), () => client.drainListenersForever(), () => client.stopInboundListeners()]) errors.push((await t.throwsAsync(call))?.message);
  // Then each failure is reported as drain_listeners, and each error names its own path
  t.deepEqual(failures, ["drain_listeners", "drain_listeners", "drain_listeners"]);
  t.deepEqual(errors.map((m) => m?.split(":")[0]), [
    "Envoy admin POST /drain_listeners?graceful&inboundonly",
    "Envoy admin POST /drain_listeners?inboundonly&graceful&skip_exit",
    "Envoy admin POST /drain_listeners?inboundonly",
  ]);
});

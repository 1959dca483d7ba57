// The real sidecar over real gRPC, driven by a client that behaves like Envoy's ext_proc filter.
import test from "ava";
import type { Decision } from "../../extproc/decision.js";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { startTestSidecar, type Harness } from "../helpers/sidecar-harness.js";

async function metricsText(h: Harness): Promise<string> {
  return (await fetch(`${h.adminUrl}/metrics`)).text();
}

function metricValue(text: string, name: string): number {
  const line = text.split("\n").find((l) => l.startsWith(name + " ") || l.startsWith(name + "{") && false);
  return line ? Number(line.split(" ").pop()) : NaN;
}

/**
 * Envoy's real message_timeout is 200 ms; these tests are about protocol shape, not speed, so the
 * emulated Envoy waits longer (a loaded CI machine must not turn them into 504s). Tests about
 * timing set their own.
 */
const PATIENT = { messageTimeoutMs: 3000 };

function withDecision(h: Harness, decision: Decision): void {
  h.sidecar.setDecider({ decide: () => decision });
}

test("protocol › an allowed GET reaches the upstream and the stream ends without a response phase", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  const envoy = new EnvoyExtProcClient(h.grpcAddress, { ...PATIENT, allowModeOverride: true });
  t.teardown(() => envoy.close());

  // when
  const out = await envoy.request({ path: "/hello" });

  // then
  t.is(out.status, 200);
  t.truthy(out.upstreamRequest);
  t.deepEqual(out.sent, ["requestHeaders"]);
  t.deepEqual(out.received, ["requestHeaders"]);
  t.is(envoy.stats.spurious_msgs_received, 0);
});

test("protocol › every phase of a request with bodies and trailers gets one matching reply", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  // given a decision that needs the response phase, and Envoy sending everything
  withDecision(h, { type: "continue", responseHeaders: { set: [["x-resp", "yes"]], add: [], remove: [] }, explain: { action: "allow", kind: "MeshHTTPRoute", reason: "t" } });
  const envoy = new EnvoyExtProcClient(h.grpcAddress, {
    ...PATIENT,
    requestBodyMode: "BUFFERED",
    responseBodyMode: "BUFFERED",
    requestTrailerMode: "SEND",
    responseTrailerMode: "SEND",
    closeMode: "graceful",
  });
  t.teardown(() => envoy.close());

  // when
  const out = await envoy.request({ method: "POST", path: "/upload", body: "abc", trailers: [["x-t", "1"]] }, () => ({ status: 201, body: "ok", trailers: [["x-rt", "2"]] }));

  // then
  const phases = ["requestHeaders", "requestBody", "requestTrailers", "responseHeaders", "responseBody", "responseTrailers"];
  t.deepEqual(out.sent, phases);
  t.deepEqual(out.received, phases);
  t.is(out.status, 201);
  t.deepEqual(out.headers, [["x-resp", "yes"]]);
  t.true(out.streamEnd === "server-ok" || out.streamEnd === "graceful-ok", out.streamEnd);
});

test("protocol › header mutations use raw_value and pass Envoy's mutation rules", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  withDecision(h, {
    type: "continue",
    requestHeaders: { set: [["x-set", "1"]], add: [["x-multi", "b"]], remove: ["x-drop"] },
    explain: { action: "allow", kind: "MeshHTTPRoute", reason: "t" },
  });
  const envoy = new EnvoyExtProcClient(h.grpcAddress, { ...PATIENT, allowModeOverride: true });
  t.teardown(() => envoy.close());

  const out = await envoy.request({ headers: [["x-multi", "a"], ["x-drop", "gone"]] });

  const hdrs = out.upstreamRequest!.headers;
  t.deepEqual(hdrs.filter(([k]) => k === "x-multi").map(([, v]) => v), ["a", "b"]);
  t.deepEqual(hdrs.filter(([k]) => k === "x-set"), [["x-set", "1"]]);
  t.false(hdrs.some(([k]) => k === "x-drop"));
  t.is(envoy.stats.rejected_header_mutations, 0);
});

test("protocol › a deny becomes an immediate_response and no response_headers follows", async (t) => {
  const h = await startTestSidecar(["--explain-header"]);
  t.teardown(() => h.stop());
  withDecision(h, { type: "respond", status: 403, body: "RBAC: access denied", headers: [], explain: { action: "deny", kind: "MeshTrafficPermission", policy: "deny-all", rule: "from[0]", reason: "t" } });
  const envoy = new EnvoyExtProcClient(h.grpcAddress, PATIENT);
  t.teardown(() => envoy.close());

  const out = await envoy.request({ path: "/secret" });

  t.is(out.status, 403);
  t.is(out.body, "RBAC: access denied");
  t.is(out.upstreamRequest, undefined);
  t.deepEqual(out.sent, ["requestHeaders"]);
  t.is(out.details, "meshext_deny");
  t.regex(out.headers.find(([k]) => k === "x-meshext-decision")?.[1] ?? "", /deny; kind=MeshTrafficPermission; policy=deny-all; rule=from\[0\]/);
  const text = await metricsText(h);
  t.regex(text, /meshext_extproc_immediate_responses_total\{status="403"\} 1/);
  t.regex(text, /meshext_decisions_total\{kind="MeshTrafficPermission",action="deny",direction="inbound"\} 1/);
});

test("protocol › a gRPC request denied gets a matching grpc-status", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  withDecision(h, { type: "respond", status: 429, body: "slow down", headers: [["retry-after", "1"]], explain: { action: "rate-limit", kind: "MeshRateLimit", reason: "t" } });
  const envoy = new EnvoyExtProcClient(h.grpcAddress, PATIENT);
  t.teardown(() => envoy.close());

  const out = await envoy.request({ method: "POST", headers: [["content-type", "application/grpc"]] });

  t.is(out.status, 429);
  t.is(out.grpcStatus, 8);
  t.deepEqual(out.headers, [["retry-after", "1"]]);
});

test("protocol › a fault delay within message_timeout holds the reply", async (t) => {
  const h = await startTestSidecar(["--message-timeout", "1s"]);
  t.teardown(() => h.stop());
  withDecision(h, { type: "continue", delayMs: 120, explain: { action: "allow", kind: "MeshFaultInjection", reason: "t" } });
  const envoy = new EnvoyExtProcClient(h.grpcAddress, PATIENT);
  t.teardown(() => envoy.close());

  const started = Date.now();
  const out = await envoy.request({});
  t.is(out.status, 200);
  t.true(Date.now() - started >= 115);
  t.is(envoy.stats.message_timeouts, 0);
});

test("protocol › a fault delay longer than message_timeout extends Envoy's timer first", async (t) => {
  const h = await startTestSidecar(["--max-message-timeout", "2s"]);
  t.teardown(() => h.stop());
  withDecision(h, { type: "continue", delayMs: 400, explain: { action: "allow", kind: "MeshFaultInjection", reason: "t" } });
  const envoy = new EnvoyExtProcClient(h.grpcAddress, { ...PATIENT, maxMessageTimeoutMs: 2000 });
  t.teardown(() => envoy.close());

  const out = await envoy.request({});
  t.is(out.status, 200);
  t.is(envoy.stats.override_message_timeout_received, 1);
  t.is(envoy.stats.message_timeouts, 0);
  t.deepEqual(out.received, ["overrideMessageTimeout", "requestHeaders"]);
});

test("protocol › without max_message_timeout a long delay is shortened and never times out", async (t) => {
  const h = await startTestSidecar(["--message-timeout", "500ms"]);
  t.teardown(() => h.stop());
  withDecision(h, { type: "continue", delayMs: 5000, explain: { action: "allow", kind: "MeshFaultInjection", reason: "t" } });
  const envoy = new EnvoyExtProcClient(h.grpcAddress, PATIENT);
  t.teardown(() => envoy.close());

  const started = Date.now();
  const out = await envoy.request({});
  const tookMs = Date.now() - started;
  t.is(out.status, 200);
  t.true(tookMs >= 400 && tookMs < 2000, `took ${tookMs}ms`);
  t.is(envoy.stats.message_timeouts, 0);
  t.regex(await metricsText(h), /meshext_fault_delays_capped_total 1/);
});

test("protocol › the emulator reports a 504 when a reply misses message_timeout", async (t) => {
  const h = await startTestSidecar(["--message-timeout", "2s"]);
  t.teardown(() => h.stop());
  // given the sidecar believes Envoy waits 2 s but Envoy really waits 50 ms
  withDecision(h, { type: "continue", delayMs: 300, explain: { action: "allow", kind: "MeshFaultInjection", reason: "t" } });
  const envoy = new EnvoyExtProcClient(h.grpcAddress, { messageTimeoutMs: 50 });
  t.teardown(() => envoy.close());
  const out = await envoy.request({});
  t.is(out.status, 504);
  t.is(out.details, "ext_proc_error_per-message_timeout_exceeded");
  // and with failure_mode_allow the request continues
  const open = new EnvoyExtProcClient(h.grpcAddress, { messageTimeoutMs: 50, failureModeAllow: true });
  t.teardown(() => open.close());
  t.is((await open.request({})).status, 200);
  t.is(open.stats.failure_mode_allowed, 1);
});

test("protocol › an out-of-order message fails only its stream with INVALID_ARGUMENT", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  const broken = new EnvoyExtProcClient(h.grpcAddress, { ...PATIENT, requestHeaderMode: "SKIP", requestBodyMode: "BUFFERED" });
  t.teardown(() => broken.close());

  // when Envoy (misconfigured) sends request_body first
  const out = await broken.request({ method: "POST", body: "payload" });

  // then that request fails closed with the gRPC error, and the server keeps serving
  t.is(out.status, 500);
  t.regex(out.details ?? "", /ext_proc_error_gRPC_error_3\{request_body before request_headers/);
  const healthy = new EnvoyExtProcClient(h.grpcAddress, PATIENT);
  t.teardown(() => healthy.close());
  t.is((await healthy.request({})).status, 200);
});

test("protocol › response_headers without request_headers (a local reply of a filter before ext_proc) pass unchanged", async (t) => {
  // Given a sidecar, and an Envoy that sends ext_proc only the response (as for the wasm filter's health answer)
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  const envoy = new EnvoyExtProcClient(h.grpcAddress, { ...PATIENT, requestHeaderMode: "SKIP" });
  t.teardown(() => envoy.close());
  // When the response goes through
  const out = await envoy.request({}, () => ({ status: 200, headers: [["x-app", "1"]] }));
  // Then it reaches the client unchanged
  t.is(out.status, 200);
  t.deepEqual(out.received, ["responseHeaders"]);
  // And it shows in the per-phase message counts, which is how a request_header_mode SKIP misconfiguration is seen
  const metrics = await (await fetch(`${h.adminUrl}/metrics`)).text();
  t.regex(metrics, /meshext_extproc_messages_received_total\{phase="response_headers"\} 1/);
  t.notRegex(metrics, /meshext_extproc_messages_received_total\{phase="request_headers"\} [1-9]/);
});

test("protocol › Envoy's END_STREAM+RST close is counted as a normal end", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  // given a decision that keeps the stream open for the response phase
  withDecision(h, { type: "continue", responseHeaders: { set: [], add: [], remove: ["server"] }, explain: { action: "allow", kind: "MeshHTTPRoute", reason: "t" } });
  const envoy = new EnvoyExtProcClient(h.grpcAddress, { ...PATIENT, responseBodyMode: "BUFFERED" });
  t.teardown(() => envoy.close());
  for (let i = 0; i < 5; i++) await envoy.request({}, () => ({ status: 200, body: "x" }));
  await new Promise((r) => setTimeout(r, 100));
  const text = await metricsText(h);
  t.is(metricValue(text, "meshext_extproc_streams_opened_total"), 5);
  t.is(metricValue(text, "meshext_extproc_streams_ended_total") + metricValue(text, "meshext_extproc_streams_cancelled_total"), 5);
  t.notRegex(text, /meshext_extproc_streams_failed_total\{/);
});

test("protocol › the direction comes from Envoy's initial metadata", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  const seen: string[] = [];
  h.sidecar.setDecider({
    decide: (facts) => {
      seen.push(`${facts.direction} ${facts.authority} ${facts.peerUriSans.join("|")}`);
      return { type: "continue", explain: { action: "allow", kind: "none", reason: "t" } };
    },
  });
  const outbound = new EnvoyExtProcClient(h.grpcAddress, { ...PATIENT, initialMetadata: { "x-meshext-direction": "outbound" } });
  const inbound = new EnvoyExtProcClient(h.grpcAddress, { ...PATIENT, requestAttributes: { "connection.uri_san_peer_certificate": "spiffe://default/web" } });
  t.teardown(() => outbound.close());
  t.teardown(() => inbound.close());
  await outbound.request({ authority: "backend.mesh:80" });
  await inbound.request({ authority: "me" });
  t.deepEqual(seen, ["outbound backend.mesh:80 ", "inbound me spiffe://default/web"]);
});

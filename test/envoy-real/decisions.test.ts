// Every inbound decision kind through a real Envoy: allow, MeshTrafficPermission deny, MeshFaultInjection abort and
// delay, MeshRateLimit's 429 with its onRateLimit headers. What the client gets is what Envoy made of the sidecar's reply.
import test from "ava";
import { startEnvoyStack } from "../helpers/envoy-stack.js";
import { fromEveryClient, headerValues, policySidecarArgs, rawRequest, sidecarMetric, waitSidecarReady } from "../helpers/envoy-policies.js";

const MTP = (action: "Allow" | "Deny") => fromEveryClient("MeshTrafficPermission", `backend-${action.toLowerCase()}`, `action: ${action}`);

test.serial("real envoy › decisions: an allowed request reaches the app unchanged and the app's answer reaches the client", async (t) => {
  // Given a MeshTrafficPermission allowing everyone into backend
  const stack = await startEnvoyStack(t, { sidecarArgs: policySidecarArgs(t, [MTP("Allow")]) });
  if (!stack) return;
  await waitSidecarReady(stack);
  // When a client calls the inbound listener
  const res = await rawRequest(stack.inboundPort, "/hello?status=201", { "x-client": "c1" });
  // Then the app answered it, saw the request as sent, and its status came through Envoy
  t.is(res.status, 201);
  t.is(stack.app.served, 1);
  const echo = JSON.parse(res.body) as { path: string; headers: Record<string, string> };
  t.is(echo.path, "/hello?status=201");
  t.is(echo.headers["x-client"], "c1");
  t.is(await sidecarMetric(stack, "meshext_decisions_total", { kind: "MeshTrafficPermission", action: "allow" }), 1);
});

test.serial("real envoy › decisions: a MeshTrafficPermission deny is Envoy's 403 with the RBAC body, and the app never sees it", async (t) => {
  // Given a MeshTrafficPermission denying everyone, with the explain header on
  const stack = await startEnvoyStack(t, { sidecarArgs: [...policySidecarArgs(t, [MTP("Deny")]), "--explain-header"] });
  if (!stack) return;
  await waitSidecarReady(stack);
  // When a client calls
  const res = await rawRequest(stack.inboundPort, "/");
  // Then Envoy answers 403 with the body the sidecar sent and the headers of a local reply
  t.is(res.status, 403);
  t.is(res.body, "RBAC: access denied");
  t.is(res.headers["server"], "envoy");
  t.is(res.headers["content-length"], String("RBAC: access denied".length));
  t.is(res.headers["x-meshext-decision"], "deny; kind=MeshTrafficPermission; policy=backend-deny; rule=from[0]");
  t.is(stack.app.served, 0);
  // and Envoy counted no ext_proc failure: the 403 is the sidecar's answer, not an error
  const stats = await stack.envoy.stats("ext_proc");
  t.is(stats.get("http.inbound.ext_proc.streams_failed") ?? 0, 0);
});

test.serial("real envoy › decisions: a MeshFaultInjection abort answers its httpStatus locally", async (t) => {
  // Given a fault that aborts every request into backend with 418
  const mfi = fromEveryClient("MeshFaultInjection", "backend-abort", "http: [{abort: {httpStatus: 418, percentage: 100}}]");
  const stack = await startEnvoyStack(t, { sidecarArgs: policySidecarArgs(t, [MTP("Allow"), mfi]) });
  if (!stack) return;
  await waitSidecarReady(stack);
  // When a client calls, twice
  const first = await rawRequest(stack.inboundPort, "/");
  const second = await rawRequest(stack.inboundPort, "/");
  // Then both get 418 from Envoy with the fault body, and the app saw neither
  t.is(first.status, 418);
  t.is(first.body, "fault filter abort");
  t.is(first.headers["server"], "envoy");
  t.is(second.status, 418);
  t.is(stack.app.served, 0);
});

test.serial("real envoy › decisions: a MeshFaultInjection delay longer than message_timeout holds the request at least that long, then it is served", async (t) => {
  // Given a 600ms delay on every request, while Envoy's ext_proc message_timeout is 200ms (the sidecar extends it)
  const mfi = fromEveryClient("MeshFaultInjection", "backend-delay", "http: [{delay: {value: 600ms, percentage: 100}}]");
  const stack = await startEnvoyStack(t, { sidecarArgs: policySidecarArgs(t, [MTP("Allow"), mfi]), messageTimeoutMs: 200 });
  if (!stack) return;
  await waitSidecarReady(stack);
  // When a client calls
  const res = await rawRequest(stack.inboundPort, "/slow");
  // Then the answer is the app's 200, and it took at least the delay
  t.is(res.status, 200);
  t.is(stack.app.served, 1);
  t.true(res.elapsedMs >= 600, `answered after ${res.elapsedMs.toFixed(0)}ms`);
  // and Envoy took the longer timeout instead of failing the request with 504
  const stats = await stack.envoy.stats("ext_proc");
  t.is(stats.get("http.inbound.ext_proc.override_message_timeout_received"), 1);
  t.is(stats.get("http.inbound.ext_proc.message_timeouts") ?? 0, 0);
});

test.serial("real envoy › decisions: over a MeshRateLimit, Envoy answers its status with the onRateLimit headers, set and added", async (t) => {
  // Given at most 2 requests per 10s into backend, answered 429 with set and added headers beyond
  const mrl = fromEveryClient(
    "MeshRateLimit",
    "backend-rate-limit",
    `local:
  http:
    requestRate: {num: 2, interval: 10s}
    onRateLimit:
      status: 429
      headers:
        set:
          - {name: x-kuma-rate-limited, value: "true"}
        add:
          - {name: retry-after, value: "10"}
          - {name: x-limit-note, value: first}
          - {name: x-limit-note, value: second}`,
  );
  const stack = await startEnvoyStack(t, { sidecarArgs: policySidecarArgs(t, [MTP("Allow"), mrl]) });
  if (!stack) return;
  await waitSidecarReady(stack);
  // When a client sends three requests
  const statuses = [];
  for (let i = 0; i < 2; i++) statuses.push((await rawRequest(stack.inboundPort, "/")).status);
  const limited = await rawRequest(stack.inboundPort, "/");
  // Then the first two are served and the third is Envoy's 429 with every onRateLimit header
  t.deepEqual(statuses, [200, 200]);
  t.is(limited.status, 429);
  t.is(limited.body, "local_rate_limited");
  t.is(limited.headers["x-kuma-rate-limited"], "true");
  t.is(limited.headers["retry-after"], "10");
  t.deepEqual(headerValues(limited.rawHeaders, "x-limit-note"), ["first", "second"]);
  t.is(stack.app.served, 2);
});

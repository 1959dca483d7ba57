// The header edits extproc/envoy-mutation-rules.ts says Envoy drops are dropped by a real Envoy: the upstream and
// the client never see them, and Envoy's ext_proc rejected_header_mutations counter moves exactly when (and by as
// much as) the sidecar's meshext_header_edits_dropped_total does.
import test from "ava";
import type { Echo, EnvoyStack } from "../helpers/envoy-stack.js";
import { startEnvoyStack } from "../helpers/envoy-stack.js";
import { envoyStat, fromEveryClient, headerValues, policySidecarArgs, rawRequest, routeToPayments, sidecarMetric, waitSidecarReady } from "../helpers/envoy-policies.js";

const OUTBOUND_REJECTED = "http.outbound_payments.ext_proc.rejected_header_mutations";
const INBOUND_REJECTED = "http.inbound.ext_proc.rejected_header_mutations";
const OURS = "meshext_header_edits_dropped_total";

const route = (request: string, response: string) =>
  routeToPayments(`- type: RequestHeaderModifier
  requestHeaderModifier: ${request}
- type: ResponseHeaderModifier
  responseHeaderModifier: ${response}`);

/** Both counters, read together. */
async function counters(stack: EnvoyStack, envoyName: string) {
  return { envoy: await envoyStat(stack, envoyName), ours: await sidecarMetric(stack, OURS) };
}

test.serial("real envoy › dropped edits: x-envoy-*, :scheme and host edits are dropped by Envoy, counted alike by Envoy and the sidecar", async (t) => {
  // Given a route whose request edits include an x-envoy-* header, a :scheme set and a host removal, and whose
  // response edits set an x-envoy-* header, next to edits Envoy applies
  const request = `{set: [{name: x-ok, value: "1"}, {name: x-envoy-upstream-rq-timeout-ms, value: "1"}, {name: ":scheme", value: https}], remove: [host]}`;
  const response = `{set: [{name: x-served, value: meshext}, {name: x-envoy-decorator-operation, value: spoofed}]}`;
  const stack = await startEnvoyStack(t, { sidecarArgs: policySidecarArgs(t, [route(request, response)]), outboundService: "payments" });
  if (!stack) return;
  await waitSidecarReady(stack);
  const before = await counters(stack, OUTBOUND_REJECTED);
  t.deepEqual(before, { envoy: 0, ours: 0 });

  // When the app calls payments on a path the route edits
  const res = await rawRequest(stack.outboundPort!, "/api/x", { host: "payments" });

  // Then the applied edits arrived and the dropped ones did not
  const echo = JSON.parse(res.body) as Echo;
  t.is(echo.headers["x-ok"], "1");
  t.is(echo.headers["x-envoy-upstream-rq-timeout-ms"], undefined);
  t.is(echo.headers.host, "payments");
  t.deepEqual(headerValues(res.rawHeaders, "x-served"), ["meshext"]);
  t.deepEqual(headerValues(res.rawHeaders, "x-envoy-decorator-operation"), []);
  // and Envoy rejected exactly the four edits the sidecar counted as dropped
  const after = await counters(stack, OUTBOUND_REJECTED);
  t.deepEqual(after, { envoy: 4, ours: 4 });
  t.is(await sidecarMetric(stack, OURS, { phase: "request", reason: "envoy-header" }), 1);
  t.is(await sidecarMetric(stack, OURS, { phase: "request", reason: "routing-header" }), 1);
  t.is(await sidecarMetric(stack, OURS, { phase: "request", reason: "never-removable" }), 1);
  t.is(await sidecarMetric(stack, OURS, { phase: "response", reason: "envoy-header" }), 1);

  // When a request the route does not match goes through
  await rawRequest(stack.outboundPort!, "/other", { host: "payments" });
  // Then neither counter moves
  t.deepEqual(await counters(stack, OUTBOUND_REJECTED), after);
});

test.serial("real envoy › dropped edits: a header named x-envoy without a dash after it (x-envoyfoo) is dropped too, and counted", async (t) => {
  // Given a route setting x-envoyfoo (Envoy protects every name starting "x-envoy") and x-envoy (the bare prefix)
  const stack = await startEnvoyStack(t, {
    sidecarArgs: policySidecarArgs(t, [route(`{set: [{name: x-envoyfoo, value: "1"}, {name: x-envoy, value: "2"}, {name: x-envo, value: "3"}]}`, `{add: [{name: x-envoyish, value: "4"}]}`)]),
    outboundService: "payments",
  });
  if (!stack) return;
  await waitSidecarReady(stack);
  // When the app calls payments twice
  const first = await rawRequest(stack.outboundPort!, "/api/x", { host: "payments" });
  await rawRequest(stack.outboundPort!, "/api/y", { host: "payments" });
  // Then x-envoyfoo, x-envoy and the response's x-envoyish never arrived, x-envo (not the prefix) did
  const echo = JSON.parse(first.body) as Echo;
  t.is(echo.headers["x-envoyfoo"], undefined);
  t.is(echo.headers["x-envoy"], undefined);
  t.is(echo.headers["x-envo"], "3");
  t.deepEqual(headerValues(first.rawHeaders, "x-envoyish"), []);
  // and both counters say three drops a request
  t.deepEqual(await counters(stack, OUTBOUND_REJECTED), { envoy: 6, ours: 6 });
});

test.serial("real envoy › dropped edits: an x-envoy-* header on a local reply (onRateLimit) is dropped, and both counters agree", async (t) => {
  // Given a rate limit of one request per minute whose 429 sets x-envoy-ratelimited next to retry-after
  const mrl = fromEveryClient(
    "MeshRateLimit",
    "backend-rate-limit",
    `local:
  http:
    requestRate: {num: 1, interval: 1m}
    onRateLimit:
      headers:
        set: [{name: x-envoy-ratelimited, value: "true"}, {name: retry-after, value: "60"}]`,
  );
  const stack = await startEnvoyStack(t, { sidecarArgs: policySidecarArgs(t, [mrl]) });
  if (!stack) return;
  await waitSidecarReady(stack);
  // When a client sends two requests
  const served = await rawRequest(stack.inboundPort, "/");
  const limited = await rawRequest(stack.inboundPort, "/");
  // Then the second is the 429 with retry-after but without the x-envoy-* header
  t.is(served.status, 200);
  t.is(limited.status, 429);
  t.is(limited.headers["retry-after"], "60");
  t.is(limited.headers["x-envoy-ratelimited"], undefined);
  // and the sidecar counted the drop on the local reply as Envoy counted it
  const c = await counters(stack, INBOUND_REJECTED);
  t.is(await sidecarMetric(stack, OURS, { phase: "local-reply", reason: "envoy-header" }), 1);
  t.deepEqual(c, { envoy: 1, ours: 1 });
});

// MeshHTTPRoute `to` rules through a real Envoy's outbound listener: request and response header edits, URLRewrite
// (path, and hostname: the shipped mutation_rules allow host/:authority) and RequestRedirect, as the app and the
// client see them.
import test from "ava";
import type { Echo } from "../helpers/envoy-stack.js";
import { startEnvoyStack } from "../helpers/envoy-stack.js";
import { headerValues, policySidecarArgs, rawRequest, routeToPayments, waitSidecarReady } from "../helpers/envoy-policies.js";

async function outboundStack(t: Parameters<typeof startEnvoyStack>[0], filters: string) {
  const stack = await startEnvoyStack(t, { sidecarArgs: policySidecarArgs(t, [routeToPayments(filters)]), outboundService: "payments" });
  if (stack) await waitSidecarReady(stack);
  return stack;
}

test.serial("real envoy › routes: RequestHeaderModifier and ResponseHeaderModifier edits are applied by Envoy on the outbound listener", async (t) => {
  // Given a route to payments that sets, adds and removes request headers, and sets, adds and removes response headers
  const stack = await outboundStack(
    t,
    `- type: RequestHeaderModifier
  requestHeaderModifier:
    set: [{name: x-caller, value: backend}, {name: x-multi, value: "a, b"}]
    add: [{name: x-trace, value: added}]
    remove: [x-debug]
- type: ResponseHeaderModifier
  responseHeaderModifier:
    set: [{name: cache-control, value: no-store}]
    add: [{name: x-served-by, value: meshext}]
    remove: [x-app-secret]`,
  );
  if (!stack) return;
  // When the app calls payments through its outbound listener with headers the route edits
  const res = await rawRequest(stack.outboundPort!, "/api/pay?set-header=x-app-secret:s3cret&set-header=cache-control:public", {
    host: "payments",
    "x-caller": "spoofed",
    "x-trace": "original",
    "x-debug": "1",
  });
  // Then the upstream saw the request edits: set replaced, add appended to the client's value, remove removed
  t.is(res.status, 200);
  const echo = JSON.parse(res.body) as Echo;
  t.is(echo.headers["x-caller"], "backend");
  t.is(echo.headers["x-multi"], "a, b");
  t.is(echo.headers["x-trace"], "original, added");
  t.is(echo.headers["x-debug"], undefined);
  // and the client got the response edits
  t.deepEqual(headerValues(res.rawHeaders, "cache-control"), ["no-store"]);
  t.deepEqual(headerValues(res.rawHeaders, "x-served-by"), ["meshext"]);
  t.deepEqual(headerValues(res.rawHeaders, "x-app-secret"), []);
});

test.serial("real envoy › routes: a request the route does not match is passed on unedited", async (t) => {
  // Given the same kind of route, matching /api only
  const stack = await outboundStack(t, `- type: RequestHeaderModifier\n  requestHeaderModifier:\n    set: [{name: x-caller, value: backend}]`);
  if (!stack) return;
  // When the app calls another path, and another service on the same listener
  const other = await rawRequest(stack.outboundPort!, "/health", { host: "payments", "x-caller": "mine" });
  const elsewhere = await rawRequest(stack.outboundPort!, "/api/x", { host: "orders", "x-caller": "mine" });
  // Then neither was edited
  t.is((JSON.parse(other.body) as Echo).headers["x-caller"], "mine");
  t.is((JSON.parse(elsewhere.body) as Echo).headers["x-caller"], "mine");
});

test.serial("real envoy › routes: URLRewrite ReplacePrefixMatch and hostname rewrite :path and host for the upstream", async (t) => {
  // Given a route rewriting the /api prefix to /v2/ (Kuma's prefix_rewrite: the replacement keeps its own slash) and the
  // hostname to payments.internal
  const stack = await outboundStack(t, `- type: URLRewrite\n  urlRewrite:\n    hostname: payments.internal\n    path: {type: ReplacePrefixMatch, replacePrefixMatch: /v2/}`);
  if (!stack) return;
  // When the app calls /api/pay?q=1 on payments
  const res = await rawRequest(stack.outboundPort!, "/api/pay?q=1", { host: "payments" });
  // Then the upstream got /v2/pay?q=1 for host payments.internal (Envoy applied the host edit: allow_expression)
  t.is(res.status, 200);
  const echo = JSON.parse(res.body) as Echo;
  t.is(echo.path, "/v2/pay?q=1");
  t.is(echo.headers.host, "payments.internal");
  // and Envoy rejected none of the edits
  t.is((await stack.envoy.stats("rejected_header_mutations")).get("http.outbound_payments.ext_proc.rejected_header_mutations") ?? 0, 0);
});

test.serial("real envoy › routes: URLRewrite ReplaceFullPath replaces the whole path and keeps the query", async (t) => {
  // Given a route replacing the full path with /checkout
  const stack = await outboundStack(t, `- type: URLRewrite\n  urlRewrite:\n    path: {type: ReplaceFullPath, replaceFullPath: /checkout}`);
  if (!stack) return;
  // When the app calls /api/pay/now?q=2
  const res = await rawRequest(stack.outboundPort!, "/api/pay/now?q=2", { host: "payments" });
  // Then the upstream got /checkout?q=2, host unchanged
  const echo = JSON.parse(res.body) as Echo;
  t.is(echo.path, "/checkout?q=2");
  t.is(echo.headers.host, "payments");
});

test.serial("real envoy › routes: RequestRedirect answers locally with its status and location; the upstream never sees the request", async (t) => {
  // Given a route redirecting to https://pay.example.com:8443/sso with 301
  const stack = await outboundStack(
    t,
    `- type: RequestRedirect\n  requestRedirect:\n    scheme: https\n    hostname: pay.example.com\n    port: 8443\n    path: {type: ReplaceFullPath, replaceFullPath: /sso}\n    statusCode: 301`,
  );
  if (!stack) return;
  // When the app calls /api/login
  const res = await rawRequest(stack.outboundPort!, "/api/login", { host: "payments" });
  // Then Envoy answers 301 with the location, from the sidecar's reply
  t.is(res.status, 301);
  t.is(res.headers.location, "https://pay.example.com:8443/sso");
  t.is(res.headers.server, "envoy");
  t.is(stack.app.served, 0);
});

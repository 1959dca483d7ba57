// Unit tests of the per-request processor: phase order, one reply of the matching kind, delays.
import test from "ava";
import type { Decider, Decision } from "../../extproc/decision.js";
import type { ProcessingRequest } from "../../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
import { delayHeadroomMs, RequestProcessor } from "../../extproc/transport/processor.js";
import { continueResponseHeaders } from "../../extproc/transport/mapping.js";
import { requestFacts } from "../../extproc/transport/mapping.js";
import { dataplaneFromTags } from "../../extproc/policy/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/engine.js";
import { parsePolicyText } from "../../extproc/policy/parse.js";

const SETTINGS = { messageTimeoutMs: 200, maxMessageTimeoutMs: 0, explainHeader: false };
const allow: Decider = { decide: () => ({ type: "continue", explain: { action: "allow", kind: "none", reason: "test" } }) };
const fixed = (d: Decision): Decider => ({ decide: () => d });

function msg(phase: string, extra: Record<string, unknown> = {}): ProcessingRequest {
  const payload =
    phase.endsWith("Headers")
      ? { headers: { headers: [{ key: ":path", value: "", rawValue: Buffer.from("/x") }] }, attributes: {}, endOfStream: true, ...extra }
      : phase.endsWith("Body")
        ? { body: Buffer.from("b"), endOfStream: true, endOfStreamWithoutMessage: false, ...extra }
        : { trailers: { headers: [] }, ...extra };
  return { request: { $case: phase, [phase]: payload }, attributes: {}, observabilityMode: false } as unknown as ProcessingRequest;
}

const ORDERED = ["requestHeaders", "requestBody", "requestTrailers", "responseHeaders", "responseBody", "responseTrailers"];

test("processor › every phase gets exactly one reply of the matching kind", (t) => {
  // given a decision that needs the response phase
  const p = new RequestProcessor(fixed({ type: "continue", responseHeaders: { set: [["x-a", "1"]], add: [], remove: [] }, explain: { action: "allow", kind: "MeshHTTPRoute", reason: "t" } }), "inbound", SETTINGS);
  for (const phase of ORDERED) {
    // when each phase arrives in order
    const step = p.handle(msg(phase, phase.endsWith("Body") ? { endOfStream: false } : phase.endsWith("Headers") ? { endOfStream: false } : {}));
    // then the reply has the same oneof case
    t.is(step.type, "reply", phase);
    if (step.type === "reply") t.is(step.reply.response?.$case as string | undefined, phase);
  }
});

test("processor › a message with no oneof set is invalid", (t) => {
  const step = new RequestProcessor(allow, "inbound", SETTINGS).handle({ attributes: {}, observabilityMode: false } as unknown as ProcessingRequest);
  t.is(step.type, "invalid");
  if (step.type === "invalid") t.regex(step.message, /no request set/);
});

const outOfOrder = test.macro((t, sequence: string[], expected: RegExp) => {
  const p = new RequestProcessor(allow, "inbound", SETTINGS);
  const steps = sequence.map((ph) => p.handle(msg(ph, { endOfStream: false })));
  const last = steps[steps.length - 1]!;
  t.is(last.type, "invalid");
  if (last.type === "invalid") t.regex(last.message, expected);
  for (const s of steps.slice(0, -1)) t.is(s.type, "reply");
});

test("processor › response_headers without request_headers (a local reply of an earlier filter) passes with no edits", (t) => {
  // Given a stream whose first message is response_headers, as Envoy sends for a filter's local reply before ext_proc
  const p = new RequestProcessor(allow, "inbound", SETTINGS);
  // When it is handled
  const step = p.handle(msg("responseHeaders", { endOfStream: true }));
  // Then the reply continues the response unchanged and ends the call; no decision was taken
  t.is(step.type, "reply");
  if (step.type === "reply") {
    t.is(step.reply.response?.$case, "responseHeaders");
    t.deepEqual(step.reply, continueResponseHeaders(undefined));
    t.true(step.endStream);
  }
  t.is(p.decided, undefined);
});
test("processor › request_body before request_headers is out of order", outOfOrder, ["requestBody"], /request_body before request_headers/);
test("processor › a second request_headers is out of order", outOfOrder, ["requestHeaders", "requestHeaders"], /request_headers after request_headers/);
test("processor › request_body after request_trailers is out of order", outOfOrder, ["requestHeaders", "requestTrailers", "requestBody"], /request_body after request_trailers/);
test("processor › response_body before response_headers is out of order", outOfOrder, ["requestHeaders", "responseBody"], /response_body before response_headers/);

test("processor › nothing is accepted after an immediate_response", (t) => {
  const p = new RequestProcessor(fixed({ type: "respond", status: 403, body: "denied", headers: [], explain: { action: "deny", kind: "MeshTrafficPermission", reason: "t" } }), "inbound", SETTINGS);
  const first = p.handle(msg("requestHeaders"));
  t.is(first.type, "reply");
  if (first.type === "reply") {
    t.is(first.reply.response?.$case, "immediateResponse");
    t.true(first.endStream);
  }
  const second = p.handle(msg("responseHeaders"));
  t.is(second.type, "invalid");
});

test("processor › allow without response edits skips the response phase and ends the stream", (t) => {
  const step = new RequestProcessor(allow, "inbound", SETTINGS).handle(msg("requestHeaders"));
  t.is(step.type, "reply");
  if (step.type !== "reply") return;
  t.is(step.reply.modeOverride?.responseHeaderMode, 2 /* SKIP */);
  t.true(step.endStream);
});

test("processor › response header edits keep the response phase and the stream open after a bodiless request", (t) => {
  // given a decision with response header edits; when request_headers arrives with end_of_stream
  const p = new RequestProcessor(fixed({ type: "continue", responseHeaders: { set: [["x-a", "1"]], add: [], remove: [] }, explain: { action: "allow", kind: "MeshHTTPRoute", reason: "t" } }), "inbound", SETTINGS);
  const step = p.handle(msg("requestHeaders"));
  // then Envoy is not told to skip response_headers and the call stays open for them
  t.is(step.type, "reply");
  if (step.type !== "reply") return;
  t.not(step.reply.modeOverride?.responseHeaderMode, 2 /* SKIP */);
  t.false(step.endStream);
});

test("processor › with response header edits the end of the request body does not end the stream", (t) => {
  // given response header edits; when the request body ends; then the call stays open for response_headers
  const p = new RequestProcessor(fixed({ type: "continue", responseHeaders: { set: [["x-a", "1"]], add: [], remove: [] }, explain: { action: "allow", kind: "MeshHTTPRoute", reason: "t" } }), "inbound", SETTINGS);
  p.handle(msg("requestHeaders", { endOfStream: false }));
  const step = p.handle(msg("requestBody", { endOfStream: true }));
  t.true(step.type === "reply" && !step.endStream);
});

test("processor › a request with a body keeps the stream open after request_headers", (t) => {
  const step = new RequestProcessor(allow, "inbound", SETTINGS).handle(msg("requestHeaders", { endOfStream: false }));
  t.true(step.type === "reply" && !step.endStream);
});

test("processor › observability-mode messages get no reply", (t) => {
  const m = msg("requestHeaders");
  m.observabilityMode = true;
  t.is(new RequestProcessor(allow, "inbound", SETTINGS).handle(m).type, "ignore");
});

const delay = (delayMs: number): Decider => fixed({ type: "continue", delayMs, explain: { action: "allow", kind: "MeshFaultInjection", reason: "t" } });

test("processor › a delay shorter than message_timeout is held without override", (t) => {
  const step = new RequestProcessor(delay(50), "inbound", SETTINGS).handle(msg("requestHeaders"));
  t.true(step.type === "reply" && step.delayMs === 50 && step.first === undefined);
});

test("processor › a long delay sends override_message_timeout first when Envoy allows it", (t) => {
  const step = new RequestProcessor(delay(1000), "inbound", { ...SETTINGS, maxMessageTimeoutMs: 5000 }).handle(msg("requestHeaders"));
  t.is(step.type, "reply");
  if (step.type !== "reply") return;
  t.is(step.delayMs, 1000);
  t.truthy(step.first?.overrideMessageTimeout);
  t.is(step.first!.response, undefined);
  t.true(step.first!.overrideMessageTimeout!.seconds * 1000 + step.first!.overrideMessageTimeout!.nanos / 1e6 > 1000);
});

test("processor › a delay that would eat the headroom inside message_timeout is shortened", (t) => {
  // given message_timeout 200ms (headroom 20ms) and no extension; when the delay is 190ms; then 180ms is held
  const step = new RequestProcessor(delay(190), "inbound", SETTINGS).handle(msg("requestHeaders"));
  t.true(step.type === "reply" && step.delayMs === 180 && step.delayCappedFromMs === 190);
});

test("processor › the headroom is a tenth of the timer but never under 20ms", (t) => {
  t.is(delayHeadroomMs(1000), 100);
  t.is(delayHeadroomMs(100), 20);
  // so with a 100ms timer an 85ms delay is cut to 80ms, not held whole
  const step = new RequestProcessor(delay(85), "inbound", { ...SETTINGS, messageTimeoutMs: 100 }).handle(msg("requestHeaders"));
  t.true(step.type === "reply" && step.delayMs === 80 && step.delayCappedFromMs === 85);
});

test("processor › a delay Envoy cannot wait for is shortened below the timeout", (t) => {
  const step = new RequestProcessor(delay(1000), "inbound", SETTINGS).handle(msg("requestHeaders"));
  t.is(step.type, "reply");
  if (step.type !== "reply") return;
  t.true(step.delayMs < 200);
  t.is(step.delayCappedFromMs, 1000);
});

const ROUTES = `
type: MeshHTTPRoute
name: rewrite-and-redirect
spec:
  targetRef: {kind: Mesh}
  to:
    - targetRef: {kind: MeshService, name: orders}
      rules:
        - matches: [{path: {type: PathPrefix, value: /v1}}]
          default: {filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /v2/}}}]}
        - matches: [{path: {type: Exact, value: /login}}]
          default: {filters: [{type: RequestRedirect, requestRedirect: {scheme: https, hostname: auth.example.com, statusCode: 301}}]}
`;

function routeEngine(): PolicyEngine {
  const engine = new PolicyEngine({ dataplane: dataplaneFromTags("default", "kuma.io/service=web").dataplane!, nowMs: () => 0 });
  engine.replace(parsePolicyText(ROUTES).policies);
  return engine;
}

function outboundHeaders(path: string): ProcessingRequest {
  const headers = [[":path", path], [":authority", "orders:80"], [":method", "GET"], [":scheme", "http"]].map(([key, v]) => ({ key, value: "", rawValue: Buffer.from(v!) }));
  return { request: { $case: "requestHeaders", requestHeaders: { headers: { headers }, attributes: {}, endOfStream: true } }, attributes: {}, observabilityMode: false } as unknown as ProcessingRequest;
}

test("processor › a MeshHTTPRoute URLRewrite reaches Envoy as a :path mutation with the route cache cleared", (t) => {
  // given a route rewriting /v1 to /v2/; when an outbound /v1/items arrives; then :path is set and the route cache cleared
  const step = new RequestProcessor(routeEngine(), "outbound", SETTINGS).handle(outboundHeaders("/v1/items"));
  t.is(step.type, "reply");
  if (step.type !== "reply" || step.reply.response?.$case !== "requestHeaders") return t.fail("no request_headers reply");
  const common = step.reply.response.requestHeaders.response!;
  t.true(common.clearRouteCache);
  t.deepEqual(common.headerMutation?.setHeaders.map((h) => [h.header!.key, h.header!.rawValue.toString()]), [[":path", "/v2/items"]]);
});

test("processor › a MeshHTTPRoute RequestRedirect is a local 301 with location", (t) => {
  // given a redirect for /login; when it arrives; then Envoy is told to answer 301 with the location header
  const step = new RequestProcessor(routeEngine(), "outbound", SETTINGS).handle(outboundHeaders("/login"));
  if (step.type !== "reply" || step.reply.response?.$case !== "immediateResponse") return t.fail("no immediate_response");
  const reply = step.reply.response.immediateResponse;
  t.is(reply.status?.code, 301);
  t.deepEqual(reply.headers?.setHeaders.map((h) => [h.header!.key, h.header!.rawValue.toString()]), [["location", "https://auth.example.com/login"]]);
});

test("processor › the SNI attribute becomes the request's sni", (t) => {
  // given ext_proc attributes with the peer URI SAN and the SNI; when mapped; then both are in the facts
  const facts = requestFacts({ headers: { headers: [] } } as never, { "envoy.filters.http.ext_proc": { "connection.uri_san_peer_certificate": "spiffe://td/ns/a/sa/b", "connection.requested_server_name": "orders.mesh" } }, "inbound");
  t.deepEqual([facts.peerUriSans, facts.sni], [["spiffe://td/ns/a/sa/b"], "orders.mesh"]);
});

// HTTP/2 while draining, on the generated bootstrap in a real Envoy, frame by frame (a proxy reads what goes by).
// The drain reaches an h2c connection two ways: the Lua shim's drainConnectionUponCompletion() on a response the wasm
// filter marked, and Envoy's own drain state (/healthcheck/fail, what the sidecar calls on SIGTERM). Both start
// Envoy's drain sequence on the connection: a GOAWAY with last stream 2^31-1 (no stream refused), the final GOAWAY
// drain_timeout later. What a client can still lose is a request it submitted but had not sent when that first
// GOAWAY arrived: its own HTTP/2 library refuses it (NGHTTP2_REFUSED_STREAM), and it never reached Envoy.
import test from "ava";
import { connect, constants as h2, type ClientHttp2Session } from "node:http2";
import { h2RefusedUnprocessed } from "../helpers/endpoint-load.js";
import { installStackDrain, postDrain, untilFilterDraining, wasmMetrics, WASM_CONTRACT as contract } from "../helpers/envoy-drain.js";
import { startEnvoyStack } from "../helpers/envoy-stack.js";
import { startH2FrameProxy } from "../helpers/h2-frame-proxy.js";
import { pollUntil } from "../helpers/poll-until.js";

/** RFC 9113 §6.8: the last stream id of a graceful shutdown's first GOAWAY. */
const MAX_STREAM_ID = 2 ** 31 - 1;

interface H2Result {
  path: string;
  id: number | undefined;
  status?: number;
  draining?: string;
  rstCode?: number;
  error?: string;
}

function request(session: ClientHttp2Session, path: string): Promise<H2Result> {
  return new Promise((resolve) => {
    const stream = session.request({ ":path": path });
    const r: H2Result = { path, id: stream.id };
    stream.on("response", (headers) => {
      r.status = Number(headers[":status"]);
      const d = headers[contract.drainingHeader!];
      if (typeof d === "string") r.draining = d;
    });
    stream.resume();
    stream.on("error", (err) => (r.error ??= err.message));
    stream.once("close", () => {
      r.id ??= stream.id;
      r.rstCode = stream.rstCode;
      resolve(r);
    });
    stream.end();
  });
}

function h2Session(url: string): ClientHttp2Session {
  const session = connect(url);
  session.on("error", () => {});
  return session;
}

test("real envoy › h2 drain: the Lua shim's drainConnectionUponCompletion() on HTTP/2 sends a graceful GOAWAY (2^31-1), serves the streams opened in the round trip after it, and sends the final GOAWAY only drain_timeout later", async (t) => {
  t.timeout(60_000);
  // Given the generated bootstrap, a drain only the wasm filter knows of (Envoy is not health-check failed), and one
  // h2c connection through the frame proxy, served before the drain, with a request held open by the app
  const stack = await startEnvoyStack(t);
  if (!stack) return;
  installStackDrain(stack);
  await pollUntil("a successful poll", () => wasmMetrics(stack), (m) => (m.get(contract.metricPollSuccesses!) ?? 0) >= 1);
  const proxy = await startH2FrameProxy(stack.inboundPort);
  t.teardown(() => proxy.close());
  const session = h2Session(proxy.url);
  t.teardown(() => session.destroy());
  const warm = await request(session, "/warm");
  t.is(warm.status, 200);
  t.is(warm.draining, undefined);
  const held = request(session, "/held?delay=8000");
  await pollUntil("the held request at the app", async () => stack.app.held, (n) => n === 1, 5000);
  // When the drain starts and the filter has seen it (its health path answers 503 on another connection)
  t.is(await postDrain(stack), 202);
  await untilFilterDraining(stack, true);
  // and a response on the connection is marked (the shim asks Envoy to drain the connection), while the client, not
  // having read Envoy's answer yet (the proxy holds it: a slow round trip), opens five more streams
  proxy.hold();
  const marked = request(session, "/marked");
  await pollUntil("Envoy's GOAWAY", async () => proxy.heldGoAway(), (seen) => seen, 10_000);
  const sentBefore = proxy.requestStreams.length;
  const inRoundTrip: Promise<H2Result>[] = [];
  for (let i = 1; i <= 5; i++) {
    inRoundTrip.push(request(session, `/round-trip-${i}`));
    await pollUntil(`stream ${i} of the round trip at Envoy`, async () => proxy.requestStreams.length, (n) => n === sentBefore + i, 5000);
  }
  const firstAtMs = proxy.goaways[0]!.atMs;
  proxy.release();
  // Then the first GOAWAY is the graceful one (last stream 2^31-1, no error), before the marked response
  t.is(proxy.goaways[0]!.lastStreamId, MAX_STREAM_ID, JSON.stringify(proxy.goaways));
  t.is(proxy.goaways[0]!.code, h2.NGHTTP2_NO_ERROR);
  const m = await marked;
  t.is(m.status, 200);
  t.is(m.draining, contract.drainingHeaderValue);
  // and every stream the client opened before it read that GOAWAY is served
  for (const r of await Promise.all(inRoundTrip)) t.like(r, { status: 200, rstCode: h2.NGHTTP2_NO_ERROR }, JSON.stringify(r));
  // and the final GOAWAY comes drain_timeout (5 s) after the first, naming the last stream Envoy received
  await pollUntil("the final GOAWAY", async () => proxy.goaways.length, (n) => n >= 2, 15_000);
  const final = proxy.goaways[1]!;
  t.true(final.atMs - firstAtMs >= 4500, `final GOAWAY ${final.atMs - firstAtMs}ms after the first`);
  t.is(final.lastStreamId, Math.max(...proxy.requestStreams), JSON.stringify(proxy.goaways));
  // and the request held across the whole sequence completes; Envoy reset nothing
  t.like(await held, { status: 200, rstCode: h2.NGHTTP2_NO_ERROR });
  t.deepEqual(proxy.resets, [], "Envoy sent no RST_STREAM");
});

test("real envoy › h2 drain: a request submitted in the event-loop turn in which the client reads Envoy's graceful GOAWAY is refused by the client's own HTTP/2 stack (NGHTTP2_REFUSED_STREAM) and never reaches Envoy, so a retry on a new connection is safe", async (t) => {
  t.timeout(60_000);
  // Given the generated bootstrap and one h2c connection through the frame proxy, served once
  const stack = await startEnvoyStack(t);
  if (!stack) return;
  const proxy = await startH2FrameProxy(stack.inboundPort);
  t.teardown(() => proxy.close());
  const session = h2Session(proxy.url);
  t.teardown(() => session.destroy());
  t.is((await request(session, "/warm")).status, 200);
  // When Envoy enters its drain state (/healthcheck/fail: what the sidecar does first on SIGTERM) and answers the
  // next request with its GOAWAY, which the client reads in the same turn in which it submits another request (the
  // proxy delivers the held bytes synchronously, just before the submit: a client busy when the frame arrived)
  proxy.hold();
  const fail = await fetch(`${stack.envoy.adminUrl}/healthcheck/fail`, { method: "POST" });
  t.is(fail.status, 200);
  await fail.text();
  const first = request(session, "/first");
  await pollUntil("Envoy's GOAWAY", async () => proxy.heldGoAway(), (seen) => seen, 10_000);
  const served = stack.app.served;
  proxy.release();
  const late = request(session, "/late");
  // Then Envoy's only GOAWAY is the graceful one, and the first request is served
  const [f, l] = await Promise.all([first, late]);
  t.like(f, { status: 200, rstCode: h2.NGHTTP2_NO_ERROR });
  t.is(proxy.goaways.length, 1, JSON.stringify(proxy.goaways));
  t.is(proxy.goaways[0]!.lastStreamId, MAX_STREAM_ID);
  // but the late one is refused: REFUSED_STREAM, with no RST_STREAM from Envoy and its HEADERS never sent
  t.is(l.rstCode, h2.NGHTTP2_REFUSED_STREAM, JSON.stringify(l));
  t.regex(l.error ?? "", /NGHTTP2_REFUSED_STREAM/);
  t.true(h2RefusedUnprocessed(l.rstCode!), "the scale-down load retries it");
  t.deepEqual(proxy.resets, []);
  t.false(proxy.requestStreams.includes(l.id!), `stream ${l.id} never reached Envoy (${proxy.requestStreams})`);
  t.is(stack.app.served, served, "nor the app");
  // and the same request on a new connection is served once
  const fresh = h2Session(stack.inboundUrl);
  t.teardown(() => fresh.destroy());
  t.like(await request(fresh, "/late"), { status: 200 });
  t.is(stack.app.served, served + 1);
});

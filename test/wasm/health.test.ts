// The health path: 200 (or pass-through) when serving, 503 with a small JSON body while draining,
// answered with proxy_send_local_response; the local reply passes back through on_response_headers.
import test from "ava";
import { HeaderAction } from "../helpers/proxy-wasm-abi.js";
import { CONTRACT, closeResponses, drainBody, exchange, poll, startFilter } from "./fixtures.js";

test("health › serving: the filter answers 200 itself", (t) => {
  const host = startFilter();
  const id = host.newHttpContext();
  const action = host.callOnRequestHeaders(id, { ":path": CONTRACT.defaultHealthPath, ":method": "GET" });
  t.is(action, HeaderAction.StopAllIterationAndWatermark);
  t.like(host.localResponse(id), { statusCode: 200, body: CONTRACT.healthBodyServing });
  t.is(host.metric(CONTRACT.metricHealthRefusals), 0);
});

test("health › draining: 503 with a JSON body, counted, and marked on the way out", (t) => {
  // given a draining filter
  const host = startFilter();
  poll(host, drainBody(true));
  // when the health path is asked (with a query string)
  const id = exchange(host, { path: `${CONTRACT.defaultHealthPath}?probe=1` });
  // then it is refused with 503 and a JSON body
  const reply = host.localResponse(id);
  t.like(reply, { statusCode: 503, body: CONTRACT.healthBodyDraining, details: CONTRACT.healthDetailsDraining });
  t.deepEqual(JSON.parse(reply!.body), { status: "draining" });
  t.true(reply!.headers.some(([k, v]) => k === "content-type" && v === "application/json"));
  t.is(host.metric(CONTRACT.metricHealthRefusals), 1);
  // and the local reply went through on_response_headers: HTTP/1.1 → connection: close
  t.is(host.responseHeader(id, ":status"), "503");
  t.is(host.responseHeader(id, "connection"), "close");
});

test("health › answerWhenServing false: passes through when serving, still 503 while draining", (t) => {
  const host = startFilter({ health: { answerWhenServing: false } });
  const serving = exchange(host, { path: CONTRACT.defaultHealthPath });
  t.is(host.localResponse(serving), undefined);
  t.is(host.responseHeader(serving, ":status"), "200");
  poll(host, drainBody(true));
  t.is(host.localResponse(exchange(host, { path: CONTRACT.defaultHealthPath }))?.statusCode, 503);
});

test("health › other paths, and prefixes of the health path, are not health checks", (t) => {
  const host = startFilter({ draining: true });
  for (const path of ["/", "/meshext/healthz", "/meshext", "/app/meshext/health"]) {
    t.is(host.localResponse(exchange(host, { path })), undefined, path);
  }
  t.is(host.metric(CONTRACT.metricHealthRefusals), 0);
});

test("health › every refusal is counted", (t) => {
  const host = startFilter({ draining: true });
  for (let i = 0; i < 3; i++) exchange(host, { path: CONTRACT.defaultHealthPath, protocol: "HTTP/2" });
  t.is(host.metric(CONTRACT.metricHealthRefusals), 3);
  // The local replies pass through the filter on their way out too: while draining every protocol is asked to close.
  t.is(closeResponses(host), 3);
});

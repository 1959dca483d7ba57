// Responses: untouched while serving; while draining, every response gets the draining header and the
// private close marker (the Lua shim's signal: close after this response, GOAWAY on HTTP/2 and 3), HTTP/1.x
// also gets connection: close, and each response asked to close is counted.
import test from "ava";
import { CONTRACT, closeResponses, drainBody, exchange, poll, startFilter } from "./fixtures.js";

test("responses › not draining: headers pass through untouched", (t) => {
  const host = startFilter();
  poll(host, drainBody(false));
  for (const protocol of ["HTTP/1.0", "HTTP/1.1", "HTTP/2"]) {
    const id = exchange(host, { protocol });
    // The Lua shim drains a connection only on the marker: an app's own Connection: close must never trigger it.
    t.deepEqual(host.responseHeaders(id), [[":status", "200"], ["content-type", "text/plain"]]);
    t.is(host.responseHeader(id, CONTRACT.closeHeader), undefined);
  }
  t.is(closeResponses(host), 0);
});

for (const protocol of ["HTTP/1.1", "HTTP/1.0"]) {
  test(`responses › draining: ${protocol} responses get connection: close and the marker`, (t) => {
    const host = startFilter();
    poll(host, drainBody(true));
    const id = exchange(host, { protocol });
    t.is(host.responseHeader(id, "connection"), "close");
    t.is(host.responseHeader(id, CONTRACT.closeHeader), CONTRACT.closeHeaderValue);
    t.is(host.responseHeader(id, CONTRACT.drainingHeader), CONTRACT.drainingHeaderValue);
    t.is(closeResponses(host), 1);
  });
}

for (const protocol of ["HTTP/2", "HTTP/3"]) {
  test(`responses › draining: ${protocol} responses get the close marker (GOAWAY through the shim), never connection: close`, (t) => {
    // Envoy 1.37: drainConnectionUponCompletion() on HTTP/2 and 3 sends GOAWAY; Connection is HTTP/1-only.
    const host = startFilter();
    poll(host, drainBody(true));
    const id = exchange(host, { protocol });
    t.is(host.responseHeader(id, "connection"), undefined);
    t.is(host.responseHeader(id, CONTRACT.closeHeader), CONTRACT.closeHeaderValue);
    t.is(host.responseHeader(id, CONTRACT.drainingHeader), CONTRACT.drainingHeaderValue);
    t.is(closeResponses(host), 1);
  });
}

test("responses › an upstream connection: keep-alive is replaced, not duplicated", (t) => {
  const host = startFilter({ draining: true });
  const id = host.newHttpContext();
  host.callOnRequestHeaders(id, { ":path": "/", ":method": "GET" });
  host.callOnResponseHeaders(id, [[":status", "200"], ["connection", "keep-alive"]]);
  t.deepEqual(host.responseHeaders(id).filter(([k]) => k === "connection"), [["connection", "close"]]);
});

test("responses › an upstream connection: close alone is left as it is and gets no marker", (t) => {
  // Envoy: encoder filters see the upstream's Connection header; Envoy itself strips it after the filter chain.
  const host = startFilter();
  const id = host.newHttpContext();
  host.callOnRequestHeaders(id, { ":path": "/", ":method": "GET" });
  host.callOnResponseHeaders(id, [[":status", "200"], ["connection", "close"]]);
  t.deepEqual(host.responseHeaders(id), [[":status", "200"], ["connection", "close"]]);
});

test("responses › every response asked to close is counted, whatever its protocol", (t) => {
  const host = startFilter({ draining: true });
  for (let i = 0; i < 5; i++) host.completeHttpContext(exchange(host));
  exchange(host, { protocol: "HTTP/2" });
  t.is(closeResponses(host), 6);
});

test("responses › closeHeader renames the marker; null or \"\" disables it (connection: close stays)", (t) => {
  const renamed = startFilter({ draining: true, closeHeader: "x-close-now" });
  t.is(renamed.responseHeader(exchange(renamed), "x-close-now"), CONTRACT.closeHeaderValue);
  for (const closeHeader of [null, ""]) {
    const host = startFilter({ draining: true, closeHeader });
    const id = exchange(host);
    t.is(host.responseHeader(id, CONTRACT.closeHeader), undefined);
    t.is(host.responseHeader(id, "connection"), "close");
  }
});

test("responses › closes are handed to the host per tick, or at the latest every 64 responses", (t) => {
  const host = startFilter({ draining: true });
  for (let i = 0; i < 63; i++) host.completeHttpContext(exchange(host));
  t.is(host.metric(CONTRACT.metricCloseResponses), 0, "no host call per response");
  host.completeHttpContext(exchange(host));
  t.is(host.metric(CONTRACT.metricCloseResponses), 64);
});

// Responses: untouched while serving; while draining, HTTP/1.x gets connection: close (never HTTP/2
// or 3), every response gets the marker header, and each closed response is counted.
import test from "ava";
import { CONTRACT, drainBody, exchange, poll, startFilter } from "./fixtures.js";

test("responses › not draining: headers pass through untouched", (t) => {
  const host = startFilter();
  poll(host, drainBody(false));
  for (const protocol of ["HTTP/1.0", "HTTP/1.1", "HTTP/2"]) {
    const id = exchange(host, { protocol });
    t.deepEqual(host.responseHeaders(id), [[":status", "200"], ["content-type", "text/plain"]]);
  }
  t.is(host.metric(CONTRACT.metricCloseResponses), 0);
});

for (const protocol of ["HTTP/1.1", "HTTP/1.0"]) {
  test(`responses › draining: ${protocol} responses get connection: close and the marker`, (t) => {
    const host = startFilter();
    poll(host, drainBody(true));
    const id = exchange(host, { protocol });
    t.is(host.responseHeader(id, "connection"), "close");
    t.is(host.responseHeader(id, CONTRACT.drainingHeader), CONTRACT.drainingHeaderValue);
    t.is(host.metric(CONTRACT.metricCloseResponses), 1);
  });
}

for (const protocol of ["HTTP/2", "HTTP/3"]) {
  test(`responses › draining: ${protocol} responses never get connection: close`, (t) => {
    const host = startFilter();
    poll(host, drainBody(true));
    const id = exchange(host, { protocol });
    t.is(host.responseHeader(id, "connection"), undefined);
    t.is(host.responseHeader(id, CONTRACT.drainingHeader), CONTRACT.drainingHeaderValue);
    t.is(host.metric(CONTRACT.metricCloseResponses), 0);
  });
}

test("responses › an upstream connection: keep-alive is replaced, not duplicated", (t) => {
  const host = startFilter({ draining: true });
  const id = host.newHttpContext();
  host.callOnRequestHeaders(id, { ":path": "/", ":method": "GET" });
  host.callOnResponseHeaders(id, [[":status", "200"], ["connection", "keep-alive"]]);
  t.deepEqual(host.responseHeaders(id).filter(([k]) => k === "connection"), [["connection", "close"]]);
});

test("responses › every closed response is counted", (t) => {
  const host = startFilter({ draining: true });
  for (let i = 0; i < 5; i++) host.completeHttpContext(exchange(host));
  exchange(host, { protocol: "HTTP/2" });
  t.is(host.metric(CONTRACT.metricCloseResponses), 5);
});

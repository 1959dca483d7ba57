// Learning the drain state: tick → proxy_http_call to the sidecar's GET /drain → state on the root
// context; failures keep the last state and count an error by reason; config can force draining.
import test from "ava";
import { CONTRACT, drainBody, exchange, poll, POLL_ERRORS, startFilter } from "./fixtures.js";

test("poll › a draining answer turns the filter draining and records since/deadline", (t) => {
  // given a serving filter
  const host = startFilter();
  t.is(host.metric(CONTRACT.metricDraining), 0);
  // when the sidecar says draining
  poll(host, drainBody(true, "2024-05-11T09:59:30.500Z", "2024-05-11T10:00:30+00:00"));
  // then the gauges show it and responses are marked
  t.is(host.metric(CONTRACT.metricDraining), 1);
  t.is(host.metric(CONTRACT.metricStartedSeconds), Date.UTC(2024, 4, 11, 9, 59, 30) / 1000);
  t.is(host.metric(CONTRACT.metricDeadlineSeconds), Date.UTC(2024, 4, 11, 10, 0, 30) / 1000);
  t.is(host.metric(CONTRACT.metricPollSuccesses), 1);
  t.is(host.responseHeader(exchange(host), "connection"), "close");
  t.regex(host.logs("info").join("\n"), /draining since 1715421570 s/);
});

test("poll › draining without since starts the drain at the poll time", (t) => {
  const host = startFilter();
  poll(host, drainBody(true));
  t.is(host.metric(CONTRACT.metricStartedSeconds), Math.floor(host.process.clock.nowMs / 1000));
});

test("poll › a serving answer after draining turns the filter back to serving", (t) => {
  const host = startFilter();
  poll(host, drainBody(true));
  poll(host, drainBody(false));
  t.is(host.metric(CONTRACT.metricDraining), 0);
  t.is(host.metric(CONTRACT.metricStartedSeconds), 0);
  t.is(host.responseHeader(exchange(host), "connection"), undefined);
});

const failures: Array<[string, string, (host: ReturnType<typeof startFilter>, token: number) => void]> = [
  ["a reset (no response)", "reset", (host, token) => host.failHttpCall(token)],
  ["an HTTP 500", "status", (host, token) => host.respondHttpCall(token, { status: 500, body: drainBody(false) })],
  ["a non-JSON body", "malformed", (host, token) => host.respondHttpCall(token, { body: "<html>" })],
  ["a body without draining", "malformed", (host, token) => host.respondHttpCall(token, { body: `{"since":null}` })],
  ["a bad since timestamp", "malformed", (host, token) => host.respondHttpCall(token, { body: drainBody(false, "yesterday") })],
  ["an empty body", "malformed", (host, token) => host.respondHttpCall(token, { body: "" })],
];

for (const [what, reason, fail] of failures) {
  test(`poll › ${what} keeps the last state and counts a ${reason} error`, (t) => {
    // given a draining filter
    const host = startFilter();
    poll(host, drainBody(true));
    // when the next poll fails
    host.advance(host.tickPeriodMs());
    fail(host, host.pendingHttpCalls()[0]!.token);
    // then it is still draining, and the error is counted and logged
    t.is(host.metric(CONTRACT.metricDraining), 1);
    t.is(host.responseHeader(exchange(host), "connection"), "close");
    t.is(host.metric(POLL_ERRORS(reason)), 1);
    t.is(host.metric(CONTRACT.metricPollSuccesses), 1);
    t.is(host.logs("warn").length, 1);
  });
}

test("poll › only one poll is in flight; the next tick after the answer polls again", (t) => {
  const host = startFilter();
  host.advance(2000); // two ticks, the first answer still outstanding
  t.is(host.pendingHttpCalls().length, 1);
  host.respondHttpCall(host.pendingHttpCalls()[0]!.token, { body: drainBody(false) });
  host.advance(1000);
  t.is(host.pendingHttpCalls().length, 1);
});

test("poll › an answer that never comes stops blocking polls after timeout + period", (t) => {
  const host = startFilter();
  host.advance(1000);
  host.advance(2000); // 2000 ms since the call > 500 ms timeout + 1000 ms period
  t.is(host.pendingHttpCalls().length, 2);
});

test("poll › configuration draining: true forces draining whatever the sidecar says", (t) => {
  // given a control plane that pushed draining: true
  const host = startFilter({ draining: true });
  t.is(host.metric(CONTRACT.metricDraining), 1);
  t.is(host.metric(CONTRACT.metricStartedSeconds), Math.floor(host.process.clock.nowMs / 1000));
  // when the sidecar says serving
  poll(host, drainBody(false));
  // then it stays draining
  t.is(host.metric(CONTRACT.metricDraining), 1);
  t.is(host.responseHeader(exchange(host), "connection"), "close");
});

// Plugin configuration: empty → documented defaults; custom values honoured; invalid → rejected with
// one critical log line saying what was expected.
import test from "ava";
import { ProxyWasmHost } from "../helpers/proxy-wasm-host.js";
import { CONTRACT, exchange, FILTER_WASM, startFilter } from "./fixtures.js";

test("config › empty configuration means the documented defaults", (t) => {
  // given a filter configured with nothing
  const host = startFilter("");
  // then it ticks every 1000 ms and polls GET /drain on meshext_sidecar_admin with a 500 ms timeout
  t.is(host.tickPeriodMs(), 1000);
  host.advance(1000);
  const [call] = host.pendingHttpCalls();
  t.is(call?.cluster, CONTRACT.defaultCluster);
  t.is(call?.timeoutMs, 500);
  t.deepEqual(Object.fromEntries(call?.headers ?? []), {
    ":method": "GET", ":path": CONTRACT.drainPath, ":authority": CONTRACT.defaultAuthority, accept: "application/json",
  });
  // and it answers the default health path itself with 200
  const id = exchange(host, { path: CONTRACT.defaultHealthPath });
  t.is(host.localResponse(id)?.statusCode, 200);
  t.deepEqual(host.logs("critical"), []);
});

test("config › custom values are honoured", (t) => {
  // given every field set
  const host = startFilter({
    poll: { cluster: "admin", path: "/state", authority: "sidecar", periodMs: 250, timeoutMs: 100 },
    health: { path: "/healthz", answerWhenServing: false },
    drainingHeader: "x-draining", closeHeader: "x-close", closeRampMs: 0, draining: false,
  }, undefined);
  t.is(host.tickPeriodMs(), 250);
  // then the poll goes where configured... (the emulator only knows meshext_sidecar_admin → dispatch error)
  host.advance(250);
  t.deepEqual(host.pendingHttpCalls(), []);
  t.is(host.metric(`${CONTRACT.metricPollErrors}${CONTRACT.metricReasonLabel}dispatch`), 1);
  t.regex(host.logs("warn").join("\n"), /cluster admin/);
  // ...and the health path passes through when serving
  const id = exchange(host, { path: "/healthz" });
  t.is(host.localResponse(id), undefined);
});

test("config › a custom cluster and path are used for the poll", (t) => {
  const host = startFilter({ poll: { path: "/v2/drain", authority: "sidecar:9902" } });
  host.advance(1000);
  const headers = Object.fromEntries(host.pendingHttpCalls()[0]?.headers ?? []);
  t.is(headers[":path"], "/v2/drain");
  t.is(headers[":authority"], "sidecar:9902");
});

const invalid: Array<[string, string, RegExp]> = [
  ["not JSON", "{poll:", /expected a JSON object/],
  ["a JSON array", "[1,2]", /expected a JSON object/],
  ["an unknown field", `{"pollPeriodMs": 5}`, /pollPeriodMs: unknown field/],
  ["a wrong type", `{"draining": "yes"}`, /draining: expected true or false/],
  ["a period out of range", `{"poll": {"periodMs": 10}}`, /poll\.periodMs: expected an integer 100\.\.3600000/],
  ["a fractional timeout", `{"poll": {"timeoutMs": 1.5}}`, /poll\.timeoutMs: expected an integer/],
  ["a relative health path", `{"health": {"path": "health"}}`, /health\.path: expected a path starting with '\/'/],
  ["an invalid header name", `{"drainingHeader": "X Draining"}`, /drainingHeader: expected a lowercase header name/],
  ["an empty cluster", `{"poll": {"cluster": ""}}`, /poll\.cluster: expected a non-empty string/],
  ["a negative ramp", `{"closeRampMs": -1}`, /closeRampMs: expected an integer 0\.\.3600000/],
  ["trailing garbage", `{"draining": false} x`, /expected a JSON object/],
];

for (const [what, config, expected] of invalid) {
  test(`config › ${what} is rejected with one critical line saying what was expected`, (t) => {
    // given a VM
    const host = ProxyWasmHost.load(FILTER_WASM);
    // when it is configured with invalid JSON
    const accepted = host.startPlugin(config);
    // then proxy_on_configure returns false and exactly one critical line explains it
    t.false(accepted);
    const critical = host.logs("critical");
    t.is(critical.length, 1);
    t.regex(critical[0]!, expected);
    t.regex(critical[0]!, /^meshext_drain: invalid plugin configuration: .*(expected|unknown field).*\(fields: wasm\/README\.md\)$/);
  });
}

test("config › several violations are all reported in the one line", (t) => {
  const host = ProxyWasmHost.load(FILTER_WASM);
  t.false(host.startPlugin({ poll: { periodMs: 0, timeoutMs: 0 }, draining: 1 }));
  const [line] = host.logs("critical");
  t.regex(line ?? "", /poll\.periodMs.*poll\.timeoutMs.*draining/);
});

test("config › drainingHeader null or \"\" disables the marker header", (t) => {
  for (const drainingHeader of [null, ""]) {
    const host = startFilter({ draining: true, drainingHeader });
    const id = exchange(host);
    t.is(host.responseHeader(id, CONTRACT.drainingHeader), undefined);
    t.is(host.responseHeader(id, "connection"), "close");
  }
});

// validate confs › the `default` of MeshFaultInjection and MeshRateLimit items field by field: parts that are not
// objects, required fields, bandwidths, percentages, durations at their minimums, and rate-limit reply headers.
import test from "ava";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";

type Pairs = [string, string][];
const pairs = (vs: { field: string; message: string }[]): Pairs => vs.map((v) => [v.field, v.message]);
const mfi = (fault: unknown): Pairs =>
  pairs(validatePolicyObject({ type: "MeshFaultInjection", mesh: "default", name: "f", spec: { targetRef: { kind: "Mesh" }, rules: [{ default: { http: [fault] } }] } }, "2.14").violations);
const mrl = (def: unknown): Pairs =>
  pairs(
    validatePolicyObject(
      { type: "MeshRateLimit", mesh: "default", name: "r", spec: { targetRef: { kind: "Mesh", proxyTypes: ["Sidecar"] }, rules: [{ default: def }] } },
      "2.14",
    ).violations,
  );
const F = "spec.rules[0].default.http[0]";
const L = "spec.rules[0].default.local";
const rate = { num: 5, interval: "1s" };
const replyHeaders = (headers: unknown) => mrl({ local: { http: { requestRate: rate, onRateLimit: { status: 429, headers } } } });
const BANDWIDTH = 'must be a bandwidth such as "100kbps" (units: bps, kbps, mbps, gbps)';
const PERCENTAGE = 'must be an integer or a decimal string such as "12.5"';

test("validate confs › given MFI faults that are not objects, when validated, then each part's own path", (t) => {
  t.deepEqual(mfi("abort"), [[F, "must be an object"]]);
  t.deepEqual(mfi({ abort: "500" }), [[`${F}.abort`, "must be an object"]]);
  t.deepEqual(mfi({ delay: "5s" }), [[`${F}.delay`, "must be an object"]]);
  t.deepEqual(mfi({ responseBandwidth: "1kbps" }), [[`${F}.responseBandwidth`, "must be an object"]]);
});

test("validate confs › given MFI parts missing their required fields, when validated, then each field must be defined", (t) => {
  t.deepEqual(mfi({ responseBandwidth: { percentage: 50 } }), [[`${F}.responseBandwidth.limit`, "must be defined"]]);
  t.deepEqual(mfi({ responseBandwidth: { limit: "1kbps" } }), [[`${F}.responseBandwidth.percentage`, "must be defined"]]);
  t.deepEqual(mfi({ delay: { percentage: 50 } }), [[`${F}.delay.value`, "must be defined"]]);
});

test("validate confs › given bandwidth limits, when validated, then a number with an optional fraction, one optional space and bps/kbps/mbps/gbps loads", (t) => {
  for (const limit of ["100kbps", "10bps", "1.25 Mbps", "2gbps", "1.5mbps"]) t.deepEqual(mfi({ responseBandwidth: { limit, percentage: 50 } }), [], limit);
  for (const limit of ["100kbpsx", "100kbit", "x100kbps", "1.kbps", "100  kbps", "100xbps"]) {
    t.deepEqual(mfi({ responseBandwidth: { limit, percentage: 50 } }), [[`${F}.responseBandwidth.limit`, BANDWIDTH]], limit);
  }
});

test("validate confs › given percentages, when validated, then integers and decimal strings in [0, 100] load; other text, other types and negatives do not", (t) => {
  const abortAt = (percentage: unknown) => mfi({ abort: { httpStatus: 500, percentage } });
  for (const p of [0, 100, "12.25", " 50 ", "100.0"]) t.deepEqual(abortAt(p), [], JSON.stringify(p));
  for (const p of ["x50", "50x", "12.", true, 1.5]) t.deepEqual(abortAt(p), [[`${F}.abort.percentage`, PERCENTAGE]], JSON.stringify(p));
  t.deepEqual(abortAt(-1), [[`${F}.abort.percentage`, "must be in inclusive range [0, 100]"]]);
  t.deepEqual(abortAt("100.5"), [[`${F}.abort.percentage`, "must be in inclusive range [0, 100]"]]);
});

test("validate confs › given durations at their minimums, when validated, then a delay may be 0s while a rate interval must be above 50ms", (t) => {
  t.deepEqual(mfi({ delay: { value: "0s", percentage: 50 } }), []);
  t.deepEqual(mrl({ local: { http: { requestRate: { num: 1, interval: "50ms" } } } }), [[`${L}.http.requestRate.interval`, "must be greater than 50ms"]]);
  t.deepEqual(mrl({ local: { http: { requestRate: { num: 1, interval: "51ms" } } } }), []);
});

test("validate confs › given MRL defaults missing or malformed parts, when validated, then each part's path and nothing more", (t) => {
  t.deepEqual(mrl({}), [[L, "must be defined"]]);
  t.deepEqual(mrl({ local: { http: "5/s" } }), [[`${L}.http`, "must be an object"]]);
  t.deepEqual(mrl({ local: { http: {} } }), [[`${L}.http`, "must have at least one defined: disabled, requestRate, onRateLimit"]]);
  t.deepEqual(mrl({ local: { http: { disabled: "yes" } } }), [[`${L}.http.disabled`, "must be a boolean"]]);
  t.deepEqual(mrl({ local: { http: { requestRate: rate, onRateLimit: "429" } } }), [[`${L}.http.onRateLimit`, "must be an object"]]);
  t.deepEqual(replyHeaders("x-limited: 1"), [[`${L}.http.onRateLimit.headers`, "must be an object"]]);
  t.deepEqual(mrl({ local: { tcp: "5/s" } }), [[`${L}.tcp`, "must be an object"]]);
  t.deepEqual(mrl({ local: { tcp: {} } }), [[`${L}.tcp`, "must have at least one defined: disabled, connectionRate"]]);
  t.deepEqual(mrl({ local: { tcp: { disabled: false } } }), []);
  t.deepEqual(mrl({ local: { tcp: { disabled: "no" } } }), [[`${L}.tcp.disabled`, "must be a boolean"]]);
  t.deepEqual(mrl({ local: { tcp: { connectionRate: "5/s" } } }), [[`${L}.tcp.connectionRate`, "must be an object"]]);
});

test("validate confs › given rate-limit reply headers, when validated, then at most 16, each an object with a valid name and a value without CR, LF or NUL", (t) => {
  const H = `${L}.http.onRateLimit.headers.set`;
  const many = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `x-h${i}`, value: "1" }));
  t.deepEqual(replyHeaders({ set: many(16) }), []);
  t.deepEqual(replyHeaders({ set: many(17) }), [[H, "must have at most 16 elements"]]);
  t.deepEqual(replyHeaders({ set: ["x-a: 1"] }), [[`${H}[0]`, "must be an object"]]);
  t.deepEqual(replyHeaders({ set: [{ value: "1" }] }), [[`${H}[0].name`, "must be defined"]]);
  t.deepEqual(replyHeaders({ set: [{ name: "x a", value: "1" }] }), [[`${H}[0].name`, "must be a valid HTTP header name"]]);
  t.deepEqual(replyHeaders({ set: [{ name: "x-a" }] }), []);
  t.deepEqual(replyHeaders({ set: [{ name: "x-a", value: 1 }] }), [[`${H}[0].value`, "must be a string"]]);
  t.deepEqual(replyHeaders({ add: [{ name: "x-a", value: "1\r\nx-b: 2" }] }), [
    [`${L}.http.onRateLimit.headers.add[0].value`, "must not contain CR, LF or NUL (Envoy fails every request the edit applies to with 500, and drops every header of a local reply)"],
  ]);
});

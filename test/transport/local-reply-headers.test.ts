// A local reply's repeated header names: the first value is set, the rest appended, so Envoy (which applies each
// set_headers entry in turn) keeps them all. test/envoy-real/decisions.test.ts shows it through a real Envoy.
import test from "ava";
import type { RespondDecision } from "../../extproc/decision.js";
import { immediateResponse } from "../../extproc/transport/mapping.js";

const decision = (headers: Array<[string, string]>): RespondDecision => ({
  type: "respond",
  status: 429,
  body: "local_rate_limited",
  headers,
  explain: { action: "rate-limit", kind: "MeshRateLimit", reason: "test" },
});

const entries = (d: RespondDecision) => {
  const r = immediateResponse(d, false, false).response;
  if (r?.$case !== "immediateResponse") throw new Error("not an immediate response");
  return (r.immediateResponse.headers?.setHeaders ?? []).map((h) => [h.header!.key, h.header!.rawValue.toString(), h.append] as const);
};

test("local reply headers › a name given twice is set once and appended once", (t) => {
  // Given onRateLimit headers naming x-note twice and retry-after once
  const d = decision([["x-note", "first"], ["retry-after", "1"], ["X-Note", "second"]]);
  // When the reply is built
  // Then x-note is set with its first value and appended with its second; retry-after is set
  t.deepEqual(entries(d), [
    ["x-note", "first", false],
    ["retry-after", "1", false],
    ["x-note", "second", true],
  ]);
});

test("local reply headers › distinct names are all set, none appended", (t) => {
  t.deepEqual(entries(decision([["a", "1"], ["b", "2"]])), [
    ["a", "1", false],
    ["b", "2", false],
  ]);
});

// jsonDiff: applying the patch to the source gives the target, and serialising the result gives the
// target's bytes (key order included), for edits of every shape injection makes.
import test from "ava";
import jsonpatch from "fast-json-patch";
import { jsonDiff } from "../../extproc/webhook/json-diff.js";

const CASES: [string, unknown, unknown][] = [
  ["equal", { a: 1, b: [1, 2] }, { a: 1, b: [1, 2] }],
  ["a new key at the end", { a: 1 }, { a: 1, b: { c: 2 } }],
  ["a handler replaced in place (key order changes)", { grpc: { port: 9 }, failureThreshold: 5 }, { httpGet: { path: "/grpc/9", port: 9000 }, failureThreshold: 5 }],
  ["an item inserted at the front of a list", { containers: [{ name: "app" }] }, { containers: [{ name: "meshext-sidecar" }, { name: "app" }] }],
  ["a key removed", { a: 1, b: 2, c: 3 }, { a: 1, c: 3 }],
  ["keys with / and ~", { annotations: { "x/y": "1" } }, { annotations: { "x/y": "2", "meshext.io/injected": "true", "a~b": "c" } }],
  ["a scalar becomes an object", { a: null }, { a: { b: 1 } }],
  ["nested list items changed in place", { l: [{ a: 1 }, { b: 2 }] }, { l: [{ a: 1 }, { b: 3, c: 4 }] }],
];

for (const [title, from, to] of CASES) {
  test(`json diff › ${title}: the patched source serialises to the target's bytes`, (t) => {
    const ops = jsonDiff(from, to);
    const patched = jsonpatch.applyPatch(structuredClone(from), ops, true, false).newDocument;
    t.is(JSON.stringify(patched), JSON.stringify(to));
    t.deepEqual(from, structuredClone(from), "the source is not modified");
  });
}

test("json diff › equal values give no operation", (t) => {
  t.deepEqual(jsonDiff({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), []);
});

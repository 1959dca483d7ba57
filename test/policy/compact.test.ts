// compact › a held policy is a deep copy of what the parser gave: equal values, no object or array shared with the
// input, scalars and null passed through, strings equal to their source (copied or not, JS cannot tell).
import test from "ava";
import { compact, StringTable } from "../../extproc/policy/documents/compact.js";

test("compact › given a nested JSON-like value, then an equal deep copy that shares no object or array", (t) => {
  // Given a value with objects, arrays, strings long and short, numbers, booleans and null
  const long = "x".repeat(40);
  const input = { name: long, spec: { from: [{ targetRef: { kind: "Mesh" }, default: { action: "Allow", n: 3, on: true, off: null } }] }, tags: ["a", long] };
  // When compacted
  const out = compact(input, new StringTable());
  // Then it is equal and every object and array is new
  t.deepEqual(out, input);
  t.not(out, input);
  t.not(out.spec, input.spec);
  t.not(out.spec.from, input.spec.from);
  t.not(out.spec.from[0], input.spec.from[0]);
  t.not(out.tags, input.tags);
});

test("compact › scalars and null come back as they are", (t) => {
  // Given scalars; when compacted; then each is returned unchanged
  const strings = new StringTable();
  for (const v of [null, undefined, 0, 7.5, true, false, "", "short", "a longer string than twelve"]) t.is(compact(v, strings), v);
});

test("compact › a string cut from a large text is interned as an equal string, the same for a repeat", (t) => {
  // Given substrings of a large text; when interned twice; then each is equal to its source
  const text = `${"-".repeat(1000)}spiffe://default/ns/shop/sa/backend${"-".repeat(1000)}`;
  const id = text.slice(1000, 1000 + 35);
  const strings = new StringTable();
  t.is(strings.intern(id), "spiffe://default/ns/shop/sa/backend");
  t.is(strings.intern(text.slice(1000, 1035)), id);
  t.is(strings.intern("abc"), "abc");
});

test("compact › a string with a lone surrogate (YAML \"\\ud800\") is interned unchanged, short or long", (t) => {
  // Given strings holding lone high and low surrogates, and a well-formed pair, each cut from a larger text
  const strings = new StringTable();
  const text = `${"x".repeat(100)}abcdefghijklmn\ud800|\udc00abcdefghijklmn|pair \ud83d\ude00 abcdefgh|\ud800`;
  const [loneHigh, loneLow, pair, short] = text.slice(100).split("|");
  // When interned; then each comes back code unit for code unit, none turned into U+FFFD
  for (const s of [loneHigh!, loneLow!, pair!, short!]) t.is(strings.intern(s), s, JSON.stringify(s));
  t.false(strings.intern(loneHigh!).includes("\ufffd"));
});

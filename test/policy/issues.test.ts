// issues › the validators' shared checks (list, one-of, integer range, string map, object guard) with their field paths and messages, and dropNulls (a null is an absent field in Kuma).
import test from "ava";
import { dropNulls, Issues, isObj } from "../../extproc/policy/documents/issues.js";

function run(check: (issues: Issues) => void): Array<[string, string]> {
  const issues = new Issues();
  check(issues);
  return issues.list.map((v) => [v.field, v.message]);
}

test("issues › arr: a missing list is required by default; with a minimum it needs an element; optional it is fine", (t) => {
  // Given no value; when checked as a list in each way; then these violations
  t.deepEqual(run((i) => i.arr(undefined, "spec.from")), [["spec.from", "must be defined"]]);
  t.deepEqual(run((i) => i.arr(undefined, "spec.from", true, 1)), [["spec.from", "must have at least one element"]]);
  t.deepEqual(run((i) => i.arr(undefined, "spec.from", false)), []);
  t.deepEqual(run((i) => i.arr([], "spec.from", true, 1)), [["spec.from", "must have at least one element"]]);
  t.deepEqual(run((i) => i.arr({}, "spec.from")), [["spec.from", "must be a list"]]);
});

test("issues › oneOf: anything but one of the allowed strings names them", (t) => {
  // Given a number, an unknown string, an allowed one; when checked; then
  t.deepEqual(run((i) => i.oneOf(5, "action", ["Allow", "Deny"])), [["action", "must be one of Allow, Deny"]]);
  t.deepEqual(run((i) => i.oneOf("Nope", "action", ["Allow", "Deny"])), [["action", "must be one of Allow, Deny"]]);
  const issues = new Issues();
  t.is(issues.oneOf("Deny", "action", ["Allow", "Deny"]), "Deny");
  t.deepEqual(issues.list, []);
});

test("issues › int: a string or a fraction is not an integer; the range is inclusive", (t) => {
  // Given values around [0, 10]; when checked; then
  t.deepEqual(run((i) => i.int("1", "n", 0, 10)), [["n", "must be an integer"]]);
  t.deepEqual(run((i) => i.int(1.5, "n", 0, 10)), [["n", "must be an integer"]]);
  t.deepEqual(run((i) => i.int(10, "n", 0, 10)), []);
  t.deepEqual(run((i) => i.int(0, "n", 0, 10)), []);
  t.deepEqual(run((i) => i.int(11, "n", 0, 10)), [["n", "must be in inclusive range [0, 10]"]]);
  t.deepEqual(run((i) => i.int(0, "n", 1, Number.MAX_SAFE_INTEGER)), [["n", "must be at least 1"]]);
});

test("issues › stringMap: an empty key, a non-string value and an empty value are each named", (t) => {
  // Given a map with each mistake; when checked; then
  t.deepEqual(run((i) => i.stringMap({ "": "x" }, "tags", true)), [["tags", "tag key must not be empty"]]);
  t.deepEqual(run((i) => i.stringMap({ a: 1 }, "tags", true)), [["tags.a", "must be a string"]]);
  t.deepEqual(run((i) => i.stringMap({ a: "" }, "tags", true)), [["tags.a", "tag value must not be empty"]]);
  t.deepEqual(run((i) => i.stringMap({}, "tags", true, true)), [["tags", "must have at least one element"]]);
});

test("issues › isObj: only non-null, non-array objects", (t) => {
  // Given values of each kind; when tested; then
  t.true(isObj({}));
  t.false(isObj(null));
  t.false(isObj([]));
  t.false(isObj("x"));
});

test("issues › dropNulls removes null (and holes, undefined fields) deeply, keeping everything else", (t) => {
  // Given nulls in lists and objects at several depths, and a hole; when dropped; then
  // eslint-disable-next-line no-sparse-arrays
  const sparse = [1, , 2];
  t.deepEqual(dropNulls([1, null, [null, 2], { a: null, b: 1, c: undefined, d: { e: null, f: [null] } }]), [1, [2], { b: 1, d: { f: [] } }]);
  t.deepEqual(dropNulls(sparse), [1, 2]);
  t.is(dropNulls(0), 0);
  t.is(dropNulls(null), null);
});

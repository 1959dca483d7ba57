// parse simple › policy texts in the plain YAML subset read without the yaml library: policies, rejections (index, kind, name, source), lists expanded, and texts outside the subset left to parse.ts.
import test from "ava";
import { expand, expandAll, parseSimpleDocument, parseSimplePolicyText } from "../../extproc/policy/documents/parse-simple.js";

const MTP = (name: string) => `type: MeshTrafficPermission
name: ${name}
mesh: default
spec:
  targetRef:
    kind: Mesh
  from:
  - targetRef:
      kind: Mesh
    default:
      action: Allow
`;

test("parse simple › given two policies, an empty document and a bad one, when parsed, then the policies with their source and the bad one rejected with its index", (t) => {
  // Given a file of four documents: a policy, an empty document, a policy of unknown type, a policy
  const text = [MTP("a"), "", "type: Nope\nname: x\n", MTP("b")].join("---\n");
  // When parsed with a source name
  const result = parseSimplePolicyText(text, "file.yaml");
  // Then both policies are read (empty documents are not counted), the bad one is rejected at index 1
  t.truthy(result);
  t.deepEqual(result!.policies.map((p) => [p.name, p.source]), [["a", "file.yaml"], ["b", "file.yaml"]]);
  t.deepEqual(result!.resources, []);
  t.is(result!.rejected.length, 1);
  const [rejected] = result!.rejected;
  t.like(rejected, { source: "file.yaml", index: 1, kind: "Nope", name: "x" });
  t.true(rejected!.violations.some((v) => v.field === "type"));
});

test("parse simple › given no source, when parsed, then policies and rejections carry none", (t) => {
  // Given a policy and a bad document; when parsed without a source; then no source field
  const result = parseSimplePolicyText([MTP("a"), "type: Nope\nname: x\n"].join("---\n"));
  t.false("source" in result!.policies[0]!);
  t.false("source" in result!.rejected[0]!);
});

test("parse simple › given a text outside the plain subset, when parsed, then it is left to the library (undefined)", (t) => {
  // Given a comment, a flow list; when parsed; then undefined
  t.is(parseSimplePolicyText(`# comment\n${MTP("a")}`), undefined);
  t.is(parseSimplePolicyText("type: MeshTrafficPermission\nname: [a, b]\n"), undefined);
  t.is(parseSimpleDocument("name: [a, b]\n"), undefined);
});

test("parse simple › given a List of policies, when parsed, then each item is a numbered document", (t) => {
  // Given `items:` holding a policy and a bad item; when parsed; then the policy, and the bad item rejected at index 1
  const item = MTP("a").replace(/^/gm, "  ").replace(/^  type/, "- type").trimEnd();
  const text = `items:\n${item}\n- name: x\n`;
  const result = parseSimplePolicyText(text);
  t.deepEqual(result!.policies.map((p) => p.name), ["a"]);
  t.deepEqual(result!.rejected.map((r) => r.index), [1]);
});

test("parse simple › given one document text, when parsed alone, then the same result as its file", (t) => {
  // Given one policy text; when read as a document and as a file; then equal results
  const doc = parseSimpleDocument(MTP("a"), "f.yaml");
  t.deepEqual(doc, parseSimplePolicyText(MTP("a"), "f.yaml"));
  t.deepEqual(doc!.policies.map((p) => p.name), ["a"]);
  t.deepEqual(parseSimpleDocument(""), { policies: [], resources: [], rejected: [] });
});

test("parse simple › expand: null and undefined give nothing, a list its items, a List its items, anything else itself", (t) => {
  // Given values of each shape; when expanded; then
  t.deepEqual(expand(null), []);
  t.deepEqual(expand(undefined), []);
  t.deepEqual(expand([1, 2]), [1, 2]);
  t.deepEqual(expand({ items: [1, 2] }), [1, 2]);
  t.deepEqual(expand({ type: "T", items: [1] }), [{ type: "T", items: [1] }]);
  t.deepEqual(expand({ kind: "K", items: [1] }), [{ kind: "K", items: [1] }]);
  t.deepEqual(expand("x"), ["x"]);
});

test("parse simple › expandAll numbers documents across values and stops taking values at 50 000 documents", (t) => {
  // Given values of one, none, two documents; when expanded; then indexes run on
  t.deepEqual([...expandAll([{ a: 1 }, null, [{ b: 2 }, { c: 3 }]])], [{ index: 0, value: { a: 1 } }, { index: 1, value: { b: 2 } }, { index: 2, value: { c: 3 } }]);
  // Given a first value of 50 000 documents and another value; when expanded; then the other value is not taken
  const all = [...expandAll([new Array(50_000).fill(1), 2])];
  t.is(all.length, 50_000);
  t.is(all[all.length - 1]!.index, 49_999);
});

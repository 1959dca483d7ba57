// parse limits › the text size limit and the document count limit (lowered here) of parseDocuments and of the
// plain-subset reader, rejected resource documents, identify()'s best-effort kind and name, and a parser-depth refusal.
import test from "ava";
import { identify, parseDocuments, parsePolicyText, PARSE_LIMITS } from "../../extproc/policy/documents/parse.js";
import { parseSimpleDocument, parseSimplePolicyText } from "../../extproc/policy/documents/parse-simple.js";

// The limits are read on every call: lowered while a test runs (and put back after it, for the other test files a
// process may hold, as the mutation harness's workers do) so that texts at them stay small.
const LIMITS = PARSE_LIMITS as { maxTextBytes: number; maxDocuments: number };
const MAX = 4096;
const MAX_DOCUMENTS = 3;
function withLoweredLimits<T>(run: () => T): T {
  const saved = { ...LIMITS };
  Object.assign(LIMITS, { maxTextBytes: MAX, maxDocuments: MAX_DOCUMENTS });
  try {
    return run();
  } finally {
    Object.assign(LIMITS, saved);
  }
}
/** A plain-subset text of exactly `length` characters: one key with a long word value. */
const plainText = (length: number) => `k: ${"v".repeat(length - 4)}\n`;

test("parse limits › given a plain text one character over the size limit, when parsed, then one document violation naming the limit", (t) => {
  // Given a text one character longer than the limit, in the plain subset
  const text = plainText(MAX + 1);
  // When read by parseDocuments, and by the plain-subset readers
  // Then the one rejection says why, and the plain readers leave it to parse.ts (undefined)
  withLoweredLimits(() => {
    t.deepEqual(parseDocuments(text), [{ index: 0, violations: [{ field: "document", message: `text larger than ${MAX} bytes` }] }]);
    t.is(parseSimplePolicyText(text), undefined);
    t.is(parseSimpleDocument(text), undefined);
  });
});

test("parse limits › given a plain text of exactly the size limit, when parsed, then it is read", (t) => {
  // Given a text of exactly the limit; when read by each reader; then its one document is read
  const text = plainText(MAX);
  withLoweredLimits(() => {
    const docs = parseDocuments(text);
    t.is(docs.length, 1);
    t.is((docs[0]!.value as { k: string }).k.length, MAX - 4);
    t.is(parseSimplePolicyText(text)?.rejected.length, 1);
    t.is(parseSimpleDocument(text)?.rejected.length, 1);
  });
});

test("parse limits › given a text the library reads with as many documents as the limit and one more, when parsed, then the one past it is dropped", (t) => {
  // Given a commented text (outside the plain subset) whose first document is a list of 3 items, then one more document
  const text = `# many\n${"- x\n".repeat(MAX_DOCUMENTS)}---\nextra\n`;
  // When parsed; then exactly 3 documents, the extra one not among them
  const docs = withLoweredLimits(() => parseDocuments(text));
  t.is(docs.length, MAX_DOCUMENTS);
  t.false(docs.some((d) => d.value === "extra"));
});

test("parse limits › given invalid YAML that the parser nests deeper than the scan sees, when parsed, then one document violation", (t) => {
  // Given `? ` and a multi-line quoted key repeated (error recovery nests a mapping per repetition)
  const text = '  ? \n  "a:   ? \n'.repeat(200) + '  "a: x\n';
  // When parsed; then a single rejection on the document, naming the depth limit
  t.deepEqual(parseDocuments(text), [{ index: 0, violations: [{ field: "document", message: "text nests deeper than 64 levels" }] }]);
});

test("parse limits › given a Mesh resource with a bad field, when parsed, then it is rejected with its index, kind, name and source", (t) => {
  // Given a policy then a Mesh whose mtls is not an object
  const text = "type: Mesh\nname: m\nmtls: 5\n";
  for (const parse of [parsePolicyText, parseSimplePolicyText]) {
    // When parsed (with the library's reader and the plain one)
    const r = parse(text, "f.yaml")!;
    // Then no resource, and one rejection that says which document it was
    t.deepEqual(r.resources, []);
    t.is(r.rejected.length, 1);
    t.like(r.rejected[0], { source: "f.yaml", index: 0, kind: "Mesh", name: "m" });
    t.true(r.rejected[0]!.violations.length > 0);
  }
});

test("parse limits › given a null item in a list, when parsed, then it is rejected as a document that is not an object", (t) => {
  // Given a list whose only item is null; when parsed; then one rejection with index 0 and no kind or name
  const r = parseSimplePolicyText("- ~\n")!;
  t.deepEqual(r.rejected.map(({ index, kind, name }) => ({ index, kind, name })), [{ index: 0, kind: undefined, name: undefined }]);
  t.deepEqual(identify(null), {});
});

test("parse limits › identify: kind and name only where they are non-empty strings; the namespace only when it is one", (t) => {
  // Given documents with odd kinds, names and namespaces; when identified; then only well-formed parts are named
  t.deepEqual(identify({ kind: 5, metadata: { name: "a" } }), { name: "a" });
  t.deepEqual(identify({ kind: "MeshTrafficPermission", metadata: { name: 5 } }), { kind: "MeshTrafficPermission" });
  t.deepEqual(identify({ kind: "MeshTrafficPermission" }), { kind: "MeshTrafficPermission" });
  t.deepEqual(identify({ metadata: { name: "a", namespace: 5 } }), { name: "a" });
  t.deepEqual(identify({ metadata: { name: "a", namespace: "" } }), { name: "a" });
  t.deepEqual(identify({ metadata: { name: "a", namespace: "shop" } }), { name: "a.shop" });
  t.deepEqual(identify("text"), {});
});

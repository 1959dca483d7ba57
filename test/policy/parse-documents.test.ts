// parse documents › texts the yaml library reads (outside the plain subset): YAML errors as one-line document violations (at most 5 per document), alias bombs and deep nesting refused, numbering continued after a rejected document.
import test from "ava";
import { parseDocuments } from "../../extproc/policy/documents/parse.js";

test("parse documents › given duplicate keys, when parsed, then at most five one-line 'invalid YAML' violations for that document", (t) => {
  // Given a commented text (so the library reads it) with a key repeated eight times
  const text = `# c\n${Array.from({ length: 8 }, (_, i) => `a: ${i}`).join("\n")}\n`;
  // When parsed; then one rejected document with five violations, each on one line
  const docs = parseDocuments(text);
  t.is(docs.length, 1);
  t.is(docs[0]!.index, 0);
  t.is(docs[0]!.violations!.length, 5);
  for (const v of docs[0]!.violations!) {
    t.is(v.field, "document");
    t.regex(v.message, /^invalid YAML: Map keys must be unique/);
    t.false(v.message.includes("\n"), v.message);
  }
});

test("parse documents › given an alias bomb then a good document, when parsed, then the bomb is rejected and the next document keeps its index", (t) => {
  // Given 101 aliases of one anchor (over the limit of 100), then `c: 1`
  const text = `a: &a x\nb: [${"*a,".repeat(101)}]\n---\nc: 1\n`;
  // When parsed; then document 0 is refused as YAML, document 1 is read
  const docs = parseDocuments(text);
  t.deepEqual(docs, [
    { index: 0, violations: [{ field: "document", message: "invalid YAML: Excessive alias count indicates a resource exhaustion attack" }] },
    { index: 1, value: { c: 1 } },
  ]);
});

test("parse documents › given brackets nested 65 deep, when parsed, then the text is refused before the parser", (t) => {
  // Given [[[…]]] 65 levels deep; when parsed; then one violation naming the depth limit
  t.deepEqual(parseDocuments(`${"[".repeat(65)}${"]".repeat(65)}`), [{ index: 0, violations: [{ field: "document", message: "text nests deeper than 64 levels" }] }]);
});

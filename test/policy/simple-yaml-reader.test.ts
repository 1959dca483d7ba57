// simple yaml reader › edges of the fast reader: `---` at the very start, the document count and nesting depth it
// takes, a shallower line after an empty key, and one-line values it must leave to the yaml library (comments,
// text after a closing quote, `: ` or a final `:` inside, flow punctuation) or read itself (digits 0 and 9).
import test from "ava";
import { parseAllDocuments } from "yaml";
import { documentTexts, simpleYamlDocuments } from "../../extproc/policy/documents/simple-yaml.js";

/** `n` mappings each nested in the one before (`k:` lines, two columns deeper each), the last one's value null. */
const nestedMaps = (n: number) => Array.from({ length: n }, (_, i) => `${" ".repeat(2 * i)}k:`).join("\n") + "\n";
/** `n` sequences each nested in the one before (bare `-` lines, two columns deeper each), the last item null. */
const nestedSeqs = (n: number) => Array.from({ length: n }, (_, i) => `${" ".repeat(2 * i)}-`).join("\n") + "\n";

test("simple yaml reader › given a text that starts with ---, when read fast, then its document is read", (t) => {
  // Given `---` on the first line, then a mapping; when read fast
  const docs = simpleYamlDocuments("---\na: 1\n");
  // Then the reader takes it, and its documents (apart from the empty one before ---) are the library's
  t.deepEqual(docs?.filter((d) => d !== null), [{ a: 1 }]);
  t.deepEqual(parseAllDocuments("---\na: 1\n").map((d) => d.toJS()), [{ a: 1 }]);
});

test("simple yaml reader › given 50 000 --- lines, when split, then 50 001 documents; one more line and the text is declined", (t) => {
  // Given texts of 50 000 and 50 001 `---` lines; when split into documents
  const at = documentTexts("---\n".repeat(50_000));
  const over = documentTexts("---\n".repeat(50_001));
  // Then the first gives 50 001 (empty) documents, the second is left to the library
  t.is(at?.length, 50_001);
  t.is(over, undefined);
});

test("simple yaml reader › given mappings nested 33 deep, when read fast, then read; 34 deep is left to the library", (t) => {
  // Given 33 and 34 nested mappings; when read fast
  const ok = simpleYamlDocuments(nestedMaps(33));
  // Then 33 levels are read (33 keys down to null), 34 are declined
  let v: unknown = ok?.[0];
  for (let i = 0; i < 33; i++) v = (v as { k: unknown }).k;
  t.is(v, null);
  t.is(simpleYamlDocuments(nestedMaps(34)), undefined);
});

test("simple yaml reader › given sequences nested 33 deep, when read fast, then read; 34 deep is left to the library", (t) => {
  // Given 33 and 34 nested sequences; when read fast
  const ok = simpleYamlDocuments(nestedSeqs(33));
  // Then 33 levels are read (33 lists down to null), 34 are declined
  let v: unknown = ok?.[0];
  for (let i = 0; i < 33; i++) v = (v as unknown[])[0];
  t.is(v, null);
  t.is(simpleYamlDocuments(nestedSeqs(34)), undefined);
});

test("simple yaml reader › given an empty key followed by a shallower line, when read fast, then the key is null and the line its parent's", (t) => {
  // Given `a:` holding `b:` (empty), then `c: 1` back at the top; when read fast; then as the library reads it
  const text = "a:\n  b:\nc: 1\n";
  t.deepEqual(simpleYamlDocuments(text), [{ a: { b: null }, c: 1 }]);
  t.deepEqual(parseAllDocuments(text)[0]!.toJS(), { a: { b: null }, c: 1 });
});

const declines = test.macro({
  exec(t, text: string) {
    // Given a text outside the subset; when read fast; then the reader declines (the library reads it)
    t.is(simpleYamlDocuments(text), undefined);
  },
  title: (provided = "", text: string) => `simple yaml reader › declines ${JSON.stringify(text)} ${provided}`,
});

test("a comment after a value (the library drops it)", declines, "key: x # note\n");
test("text after a closing quote", declines, 'key: "a" b\n');
test("`: ` inside a value (a nested mapping the library refuses)", declines, "key: x: y\n");
test("a value ending in `:` (a nested mapping the library refuses)", declines, "key: x:\n");
test("a comma inside a value (flow punctuation)", declines, "key: x,y\n");
test("a closing bracket inside a value (flow punctuation)", declines, "key: x]\n");

test("simple yaml reader › given `key: x: y` and `key: x:`, when read by the library, then both are errors (so reading them fast would differ)", (t) => {
  for (const text of ["key: x: y\n", "key: x:\n"]) t.true(parseAllDocuments(text)[0]!.errors.length > 0, text);
});

const reads = test.macro({
  exec(t, value: string, expected: unknown) {
    // Given `key: <value>`; when read fast; then the one document maps key to the expected value
    t.deepEqual(simpleYamlDocuments(`key: ${value}\n`), [{ key: expected }]);
  },
  title: (provided = "", value: string) => `simple yaml reader › value ${JSON.stringify(value)} ${provided}`,
});

test("reads 9 as a number", reads, "9", 9);
test("reads 90 as a number", reads, "90", 90);
test("reads 0s as a string", reads, "0s", "0s");
test("reads 9s as a string", reads, "9s", "9s");

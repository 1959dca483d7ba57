// simple yaml subset › which one-line scalars and keys the fast reader takes (and what it makes of them), and which it leaves to the yaml library.
import test from "ava";
import { simpleYamlDocuments } from "../../extproc/policy/documents/simple-yaml.js";

const reads = test.macro({
  exec(t, value: string, expected: unknown) {
    // Given `key: <value>`; when read fast; then the one document maps key to the expected value
    t.deepEqual(simpleYamlDocuments(`key: ${value}\n`), [{ key: expected }]);
  },
  title: (provided = "", value: string) => `simple yaml subset › value ${JSON.stringify(value)} ${provided}`,
});

const declines = test.macro({
  exec(t, text: string) {
    // Given a text outside the subset; when read fast; then the reader declines (the library reads it)
    t.is(simpleYamlDocuments(text), undefined);
  },
  title: (provided = "", text: string) => `simple yaml subset › declines ${JSON.stringify(text)} ${provided}`,
});

test("reads a double-quoted string", reads, '"ab"', "ab");
test("reads a single-quoted string", reads, "'ab'", "ab");
test("reads an empty quoted string", reads, '""', "");
test("reads null", reads, "null", null);
test("reads Null", reads, "Null", null);
test("reads ~ as null", reads, "~", null);
test("reads a word starting like null as a string", reads, "nullable", "nullable");
test("reads a word ending in null as a string", reads, "notnull", "notnull");
test("reads true", reads, "true", true);
test("reads True", reads, "True", true);
test("reads false", reads, "false", false);
test("reads False", reads, "False", false);
test("reads a word starting like true as a string", reads, "trueish", "trueish");
test("reads a word ending in true as a string", reads, "fortrue", "fortrue");
test("reads a word ending in false as a string", reads, "tfalse", "tfalse");
test("reads an integer", reads, "42", 42);
test("reads a negative integer", reads, "-7", -7);
test("reads zero", reads, "0", 0);
test("reads seconds", reads, "10s", "10s");
test("reads minutes", reads, "5m", "5m");
test("reads milliseconds", reads, "1ms", "1ms");

test("a quoted string with text before it", declines, 'key: a"b"\n');
test("a single-quoted string with text before it", declines, "key: a'b'\n");
test("an integer with a leading zero", declines, "key: 007\n");
test("a negative zero-padded integer", declines, "key: -00\n");
test("a fraction with a unit", declines, "key: 1.5s\n");
test("digits after a unit", declines, "key: 2s3\n");
test("a key with a space", declines, "a b: x\n");
test("a key with a character keys may not hold", declines, "a=b: x\n");
test("null as a key", declines, "null: x\n");
test("Null as a key", declines, "Null: x\n");
test("true as a key", declines, "true: x\n");
test("True as a key", declines, "True: x\n");
test("false as a key", declines, "false: x\n");
test("False as a key", declines, "False: x\n");

test("simple yaml subset › given keys that only start or end like null/true/false, when read fast, then they are string keys", (t) => {
  // Given such keys; when read fast; then each is a key of the mapping
  for (const key of ["nullable", "trueish", "falsey", "f_true", "t_null", "n_false", "Nfalse"]) {
    t.deepEqual(simpleYamlDocuments(`${key}: x\n`), [{ [key]: "x" }], key);
  }
});
test("__proto__ as a key", declines, "__proto__: x\n");
test("a value with a trailing space", declines, "key: x \n");
test("a first line that is indented", declines, " key: x\n");
test("a line starting with --- that is more than ---", declines, "a: 1\n---x\n");
test("a ... line", declines, "a: 1\n...\n");
test("a sequence right in a sequence", declines, "- - x\n");
test("an item with two spaces after its dash", declines, "-  x\n");
test("a sequence item inside a mapping's entries", declines, "a: 1\n- b\n");
test("a deeper line after a one-line value", declines, "a: 1\n  b: 2\n");
test("a deeper line after a one-line item", declines, "- x\n  y\n");

const structure = test.macro({
  exec(t, text: string, expected: unknown[]) {
    // Given a plain block text; when read fast; then these documents
    t.deepEqual(simpleYamlDocuments(text), expected);
  },
  title: (provided = "", text: string) => `simple yaml subset › reads ${JSON.stringify(text)} ${provided}`,
});

test("as a list of scalars", structure, "- a\n- b\n", [["a", "b"]]);
test("with a sequence at its key's indentation", structure, "key:\n- a\n- b\nnext: 1\n", [{ key: ["a", "b"], next: 1 }]);
test("with an empty key as null", structure, "key:\nnext: 1\n", [{ key: null, next: 1 }]);
test("with a bare dash as null before the next item", structure, "-\n- b\n", [[null, "b"]]);
test("with a mapping below a bare dash", structure, "-\n  a: 1\n", [[{ a: 1 }]]);
test("with mappings as items", structure, "- a: 1\n  b: 2\n- c\n", [[{ a: 1, b: 2 }, "c"]]);
test("with --- inside a value as text", structure, "key: svc---x\n", [{ key: "svc---x" }]);
test("with ... inside a value as text", structure, "key: x...y\n", [{ key: "x...y" }]);
test("as two documents", structure, "a: 1\n---\nb: 2\n", [{ a: 1 }, { b: 2 }]);
test("with a final --- as an empty last document", structure, "a: 1\n---", [{ a: 1 }, null]);

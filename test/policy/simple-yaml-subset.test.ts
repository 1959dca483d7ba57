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

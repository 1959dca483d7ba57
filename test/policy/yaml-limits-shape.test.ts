// yaml limits shape › the pre-parse scan's counts on small texts (flow brackets, commas, `:` inside brackets,
// `?`, comments, folded scalars, multi-line quotes), its early stop, and the bounded parser's errors and limits.
import test from "ava";
import { parseAllDocumentsBounded, parseYamlBounded, YamlLimitError, yamlLimitViolation, yamlShape } from "../../extproc/policy/documents/yaml-limits.js";
import { shapeMacro } from "./yaml-shape-case.js";

const shape = shapeMacro("yaml limits shape");

test("flow mapping, sequence and mapping nested: 3 brackets deep, an entry per bracket and comma", shape, "{a: [b, {c: d}]}\n", { flowDepth: 3, blockDepth: 1, nodes: 5 });
test("two flow mappings: `a: b` inside braces nests nothing by itself", shape, "{a: {b: c}}", { flowDepth: 2, blockDepth: 1, nodes: 2 });
test("`a: b: c:` in brackets: each `:` past the first nests a block mapping", shape, "[a: b: c: d]", { flowDepth: 1, blockDepth: 3, nodes: 1 });
test("a comma in brackets starts the count of `:` afresh", shape, "[a: b, c: d: e]", { flowDepth: 1, blockDepth: 2, nodes: 2 });
test("a comment line counts as a line, not as a level", shape, "# c\na: 1\n", { flowDepth: 0, blockDepth: 2, nodes: 2 });
test("`?` is an indicator: an entry, and what follows nests", shape, "? a\n", { flowDepth: 0, blockDepth: 2, nodes: 2 });
test("a folded block scalar's body nests nothing", shape, "a: >\n  x\n", { flowDepth: 0, blockDepth: 2, nodes: 2 });
test("a quoted scalar over two lines counts its line break", shape, "a: 'x\n  y'\nb: 1\n", { flowDepth: 0, blockDepth: 2, nodes: 3 });

test("yaml limits shape › given limits, when scanned, then reading stops just past the first one exceeded", (t) => {
  // Given three nested brackets and five entries; when scanned with a depth of 1, and with a node limit of 2
  const text = "{a: [b, {c: d}]}\n";
  // Then each scan stops one step past its limit instead of counting the whole text
  t.deepEqual(yamlShape(text, { maxDepth: 1 }), { flowDepth: 2, blockDepth: 1, nodes: 2 });
  t.deepEqual(yamlShape(text, { maxDepth: 64, maxNodes: 2 }), { flowDepth: 2, blockDepth: 1, nodes: 3 });
});

test("yaml limits shape › given brackets exactly as deep as the limit, when checked, then they pass; one more is refused", (t) => {
  // Given `[[a]]` (2 deep); when checked against 2 and 1; then it passes, then it nests too deep
  t.is(yamlLimitViolation("[[a]]", { maxDepth: 2 }), undefined);
  t.is(yamlLimitViolation("[[a]]", { maxDepth: 1 }), "nests deeper than 1 levels");
});

test("yaml limits shape › given a parse deeper than the limit allows, when parsed bounded, then a YamlLimitError by name", (t) => {
  // Given `- - - x` and a depth limit of 0; when parsed bounded; then it throws a named YamlLimitError
  const err = t.throws(() => parseAllDocumentsBounded("- - - x\n", {}, { maxDepth: 0 }), { instanceOf: YamlLimitError });
  t.is(err?.name, "YamlLimitError");
  t.is(err?.message, "nests deeper than 0 levels");
});

test("yaml limits shape › given `a: a` and a depth limit of 0, when parsed bounded, then the parser's room for a document and scalar is enough", (t) => {
  // Given a one-entry mapping; when parsed with no depth allowed; then it parses (the stack overhead holds it)
  t.is(parseAllDocumentsBounded("a: a", {}, { maxDepth: 0 }).length, 1);
});

test("yaml limits shape › parseYamlBounded: empty text is null, two documents and broken YAML throw as the library does", (t) => {
  // Given an empty text; when parsed; then null
  t.is(parseYamlBounded(""), null);
  // Given two documents; when parsed; then the library's MULTIPLE_DOCS error
  t.throws(() => parseYamlBounded("a: 1\n---\nb: 2\n"), { message: /^Source contains multiple documents; please use YAML\.parseAllDocuments\(\)/, code: "MULTIPLE_DOCS" } as never);
  // Given an unclosed bracket; when parsed; then it throws
  t.throws(() => parseYamlBounded("[a\n"));
});

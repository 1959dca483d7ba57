// yaml limits scan states › the pre-parse scan's counts at each lexer state: flow-error ends, brackets over lines, block scalar bodies, line ends (\n, \r\n, a lone \r), blank, tab, comment and BOM lines.
import test from "ava";
import { yamlLimitViolation, yamlShape } from "../../extproc/policy/documents/yaml-limits.js";
import { shapeMacro } from "./yaml-shape-case.js";

const shape = shapeMacro("yaml limits scan states");

/** `depth` nested block sequences on one line: `- - - … x`. */
const deepSequence = (depth: number) => "- ".repeat(depth) + "x\n";

test("an unclosed bracket's implied end (the lexer's flow-error marker) opens no level", shape, "- [a\n", { flowDepth: 1, blockDepth: 2, nodes: 3 });
test("an empty line nests nothing", shape, "\n", { flowDepth: 0, blockDepth: 0, nodes: 1 });
test("a tab-only line nests nothing", shape, "\t\n", { flowDepth: 0, blockDepth: 0, nodes: 1 });
test("a comment-only line nests nothing", shape, "# c\n", { flowDepth: 0, blockDepth: 0, nodes: 1 });
test("a byte order mark nests nothing", shape, "\ufeff\n", { flowDepth: 0, blockDepth: 0, nodes: 1 });
test("lines inside brackets at one column close each other's level", shape, "[a,\n b,\n c]\n", { flowDepth: 1, blockDepth: 2, nodes: 6 });
test("a line inside brackets closes only the levels opened inside them", shape, "- [a,\n b]\n", { flowDepth: 1, blockDepth: 3, nodes: 5 });
test("`- - -` after `a: b:` in brackets nests on top of the block mapping", shape, "[a: b: - - - c]", { flowDepth: 1, blockDepth: 5, nodes: 4 });
test("what follows a block scalar's body is structure again", shape, "- |\n  x\n- [c]\n", { flowDepth: 1, blockDepth: 2, nodes: 6 });
test("a lone carriage return, even one that starts a plain scalar, is text, not a line break", shape, "a: \rb\n", { flowDepth: 0, blockDepth: 2, nodes: 1 });
test("a quoted scalar whose text starts with a line break is one scalar, not a line end", shape, "['\n  b', c]\n", { flowDepth: 1, blockDepth: 1, nodes: 4 });
test("a value on the line after `b:` nests below the column where `b:` ended", shape, "a: 1\nb:\n    c\n", { flowDepth: 0, blockDepth: 3, nodes: 3 });
test("`a:` at the end of the text nests its empty value", shape, "a:\n", { flowDepth: 0, blockDepth: 2, nodes: 1 });
test("a closed bracket is closed: the next one starts at depth 1", shape, "a: [b]\nc: [d]\n", { flowDepth: 1, blockDepth: 2, nodes: 4 });
test("an empty flow sequence leaves the block depth that follows as it is", shape, "a: []\nb:\n  c: 1\n", { flowDepth: 1, blockDepth: 3, nodes: 4 });
test("closing brackets after `a: b: c` gives back the block mappings it nested", shape, "[a: b: c]\n- - d\n", { flowDepth: 1, blockDepth: 3, nodes: 5 });
test("a comma after `a: b: c` in brackets gives back the block mappings it nested", shape, "[a: b: c, - - - d]", { flowDepth: 1, blockDepth: 4, nodes: 5 });
test("the first line after a block scalar's body opens its level at its column", shape, "a:\n  b: |\n    x\nc: - d\n", { flowDepth: 0, blockDepth: 3, nodes: 5 });
test("a closing bracket after a plain scalar over two lines opens no level", shape, "[a\n b]\n", { flowDepth: 1, blockDepth: 1, nodes: 3 });
test("a `|` that starts a plain scalar in brackets is text, not a block scalar header: its line break is an entry", shape, "[|\n x]\n", { flowDepth: 1, blockDepth: 1, nodes: 3 });

test("yaml limits scan states › given texts with \\r\\n line ends, when scanned, then they count exactly as with \\n", (t) => {
  // Given blank lines, comment lines and nesting, each with \n and with \r\n line ends
  for (const text of ["# a\n\n# b\n", "a:\n  b: 1\n\n  c:\n    - d\n", "- \n  - x\n"]) {
    // When both are scanned; then the same depths and entry count
    t.deepEqual(yamlShape(text.replaceAll("\n", "\r\n")), yamlShape(text), JSON.stringify(text));
  }
});

test("yaml limits scan states › given nested brackets with commas, then deep block nesting, when checked, then it is refused", (t) => {
  // Given `[[a, b], c]` (the inner bracket's comma, then the outer's) and 10 nested sequences after it
  const text = "[[a, b], c]\n" + deepSequence(10);
  // When checked against a depth of 4; then it nests too deep
  t.is(yamlLimitViolation(text, { maxDepth: 4 }), "nests deeper than 4 levels");
  t.deepEqual(yamlShape("[[a, b], c]\n- x\n"), { flowDepth: 2, blockDepth: 2, nodes: 7 });
});

test("yaml limits scan states › given a plain value starting with a comma outside brackets, then deep nesting, when checked, then it is refused", (t) => {
  // Given `a: ,b` (a comma the lexer reads as the start of a scalar, not between flow entries) and 10 nested sequences
  const text = "a: ,b\nc:\n  " + deepSequence(10);
  // When checked against a depth of 4; then it nests too deep
  t.is(yamlLimitViolation(text, { maxDepth: 4 }), "nests deeper than 4 levels");
  t.deepEqual(yamlShape("a: ,b\nc:\n  d: 1\n"), { flowDepth: 0, blockDepth: 3, nodes: 4 });
});

test("yaml limits scan states › given a node bound, when a `>` in brackets starts a plain scalar over two lines, then its line break counts toward the bound", (t) => {
  // Given at most 2 entries; when `[>` + a line break + `x]` is checked (3 entries: the bracket and both line breaks); then it is refused
  t.is(yamlLimitViolation("[>\n x]\n", { maxDepth: 64, maxNodes: 2 }), "has more than 2 nodes");
});

// yaml scan small › the pre-parse scan's node and depth bounds on small texts with low limits: block scalar lines count as entries, nesting on the first line counts at its columns.
import test from "ava";
import { yamlLimitViolation, yamlShape } from "../../extproc/policy/documents/yaml-limits.js";

test("yaml scan small › given a block scalar of four lines, when scanned with a 3-node limit, then it has too many nodes", (t) => {
  // Given `a: |` and four body lines (each line break is an entry, whatever the body holds)
  const text = "a: |\n  x\n  y\n  z\n  w\n";
  // When scanned; then the line breaks are counted and a limit of 3 nodes refuses it
  t.true(yamlShape(text).nodes >= 5);
  t.is(yamlLimitViolation(text, { maxDepth: 64, maxNodes: 3 }), "has more than 3 nodes");
  t.is(yamlLimitViolation(text, { maxDepth: 64, maxNodes: 5 }), undefined);
});

test("yaml scan small › given a block scalar whose lines look like nested sequences, when scanned, then they nest nothing", (t) => {
  // Given `- - - -` inside a block scalar; when scanned with a depth limit of 2; then it passes (text, not structure)
  t.is(yamlLimitViolation("a: |\n  - - - - x\n", { maxDepth: 2 }), undefined);
});

test("yaml scan small › given a sequence item holding a mapping in a mapping, indented by 3 or 4, then 4 levels are counted", (t) => {
  // Given sequence → mapping `a` → mapping `b` → scalar, the inner mapping indented by 3 or by 4 columns
  for (const text of ["- a:\n   b: 1\n", "- a:\n    b: 1\n"]) {
    // When scanned; then a depth limit of 3 refuses it and 4 lets it through
    t.is(yamlLimitViolation(text, { maxDepth: 3 }), "nests deeper than 3 levels", JSON.stringify(text));
    t.is(yamlLimitViolation(text, { maxDepth: 4 }), undefined, JSON.stringify(text));
  }
});

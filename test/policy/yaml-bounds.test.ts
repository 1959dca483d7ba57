// yaml bounds › the bounds every YAML reader shares (yaml-bounds.ts): 64 levels by default, and no node bound of their own.
import test from "ava";
import { YAML_LIMITS } from "../../extproc/policy/documents/yaml-bounds.js";
import { yamlLimitViolation } from "../../extproc/policy/documents/yaml-limits.js";

/** `depth` nested flow sequences: `[[[…]]]`. */
const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

test("yaml bounds › the shared defaults are the documented 64 levels and no node bound (the control plane adds its own)", (t) => {
  t.deepEqual(YAML_LIMITS, { maxDepth: 64 });
});

test("yaml bounds › given the default bounds, when a document nests 65 levels, then it is refused; 64 levels pass", (t) => {
  // Given no limits passed; when flow nesting one past and right at the bound is checked; then only the deeper one is refused
  t.is(yamlLimitViolation(nested(65)), "nests deeper than 64 levels");
  t.is(yamlLimitViolation(nested(64)), undefined);
});

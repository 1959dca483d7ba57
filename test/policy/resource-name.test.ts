// Kuma's resource name rule as one check: characters, ends, and at most 253 characters.
import test from "ava";
import { isResourceName, MAX_NAME_LENGTH } from "../../extproc/policy/documents/resource-name.js";

test("resource name › given names at and around the rule's edges, when checked, then only letters, digits, '-', '_' and '.' with a letter or digit at each end and at most 253 characters pass", (t) => {
  for (const ok of ["a", "9", "a-b", "a.b_c", "A1", "a".repeat(MAX_NAME_LENGTH), `a${"-".repeat(251)}b`]) t.true(isResourceName(ok), ok.slice(0, 20));
  for (const bad of ["", "-a", "a-", ".a", "a_", "a b", "a/b", "é", "a".repeat(MAX_NAME_LENGTH + 1), `a${"-".repeat(252)}b`, "a\n"]) t.false(isResourceName(bad), JSON.stringify(bad.slice(0, 20)));
  t.is(MAX_NAME_LENGTH, 253);
});

// conformance › one ava test per test/testdata/policy/<case>.input.yaml, compared with <case>.golden.json.
import test from "ava";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { assertGolden } from "./golden.js";
import { runCase } from "./conformance-case.js";

const DIR = fileURLToPath(new URL("../../../test/testdata/policy/", import.meta.url));
const cases = readdirSync(DIR).filter((f) => f.endsWith(".input.yaml")).sort();

test("conformance › the folder holds at least 40 cases", (t) => {
  t.true(cases.length >= 40, `only ${cases.length} cases`);
});

for (const file of cases) {
  const name = file.replace(/\.input\.yaml$/, "");
  test(`conformance › ${name}`, (t) => {
    // given a case file; when it runs through parse, validate, compile and decide; then it matches the golden
    const result = runCase(join(DIR, file));
    assertGolden(t, join(DIR, `${name}.golden.json`), result);
  });
}

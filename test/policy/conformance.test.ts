// conformance › one ava test per test/testdata/policy/<case>.input.yaml, compared with <case>.golden.json;
// and every case of the 2.6 corpus (no engine.kumaVersion) run again as Kuma 2.14 must decide the same.
import test from "ava";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { assertGolden } from "./golden.js";
import { runCase } from "./conformance-case.js";

const DIR = fileURLToPath(new URL("../../../test/testdata/policy/", import.meta.url));
const cases = readdirSync(DIR).filter((f) => f.endsWith(".input.yaml")).sort();

/** 2.6-corpus cases whose YAML Kuma 2.14 decides differently, with the reason (docs/policies.md lists them). */
const CHANGED_IN_214: Readonly<Record<string, string>> = {
  "mhr-kuma-docs-frontend-to-backend": "2.8+ sets MeshHTTPRoute header values literally (no comma split)",
  "mhr-response-edits-and-set-split": "2.8+ sets MeshHTTPRoute header values literally (no comma split)",
  "mhr-merge-by-matches": "2.7+ orders MeshHTTPRoute rules by match specificity",
  "mhr-name-tiebreak-order": "2.7+ orders MeshHTTPRoute rules by match specificity",
  "mhr-path-types": "2.7+ orders MeshHTTPRoute rules by match specificity",
};

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
  const text = readFileSync(join(DIR, file), "utf8");
  if (/kumaVersion:/.test(text) || CHANGED_IN_214[name]) continue;
  test(`conformance › ${name} decides the same as Kuma 2.14`, (t) => {
    // given a 2.6-corpus case; when run as Kuma 2.14; then every request gets the golden's (2.6) decision
    const golden = JSON.parse(readFileSync(join(DIR, `${name}.golden.json`), "utf8")) as { requests: unknown };
    t.deepEqual(runCase(join(DIR, file), "2.14").requests, golden.requests);
  });
}

// kuma-version › the version table: parsing version texts and the rows the engine reads.
import test from "ava";
import { DEFAULT_KUMA_VERSION, parseKumaVersion, versionTraits } from "../../extproc/policy/model/kuma-version.js";

const parses = test.macro((t, text: string, expected: string | undefined) => {
  t.is(parseKumaVersion(text) as string | undefined, expected);
});
test("kuma-version › 2.14.3 keeps its patch level", parses, "2.14.3", "2.14.3");
test("kuma-version › v2.7.29 keeps its patch level", parses, "v2.7.29", "2.7.29");
test("kuma-version › a pre-release of a patch counts as that patch", parses, "2.13.5-rc.1", "2.13.5");
test("kuma-version › v2.13.0 reads as 2.13", parses, "v2.13.0", "2.13");
test("kuma-version › 2.6 reads as 2.6", parses, "2.6", "2.6");
test("kuma-version › a newer 2.x reads as 2.14", parses, "2.15.0-rc1", "2.14");
test("kuma-version › 3.0 is not a dialect of this engine", parses, "3.0.0", undefined);
test("kuma-version › 2.4 is older than the table", parses, "2.4.1", undefined);
test("kuma-version › text that is not a version", parses, "latest", undefined);

test("kuma-version › the default is 2.14", (t) => {
  t.is(DEFAULT_KUMA_VERSION, "2.14");
});

test("kuma-version › each change appears in the row of its version and stays in later rows", (t) => {
  // given the table; when reading rows; then a change is absent before its version and present from it on
  t.false(versionTraits("2.9").kindRank.Dataplane !== undefined);
  t.is(versionTraits("2.10").kindRank.Dataplane, 2);
  t.is(versionTraits("2.14").kindRank.Dataplane, 2);
  t.is(versionTraits("2.13").mtpRules, "per-rule");
  t.is(versionTraits("2.14").mtpRules, "pooled");
  t.true(versionTraits("2.7").routeHeaderCommaSplit);
  t.false(versionTraits("2.8").routeHeaderCommaSplit);
  t.is(versionTraits("2.11").sectionNameMatches, "name");
  t.is(versionTraits("2.12").sectionNameMatches, "name-or-port");
  t.deepEqual([...versionTraits("2.13").rulesKinds].sort(), ["MeshFaultInjection", "MeshRateLimit", "MeshTrafficPermission"]);
  t.is(versionTraits("2.5").nameWins, "later");
  t.is(versionTraits("2.6").nameWins, "earlier");
});

test("kuma-version › a backported fix holds from its patch of each minor on", (t) => {
  // given the patch rows; when reading releases around each backport; then the fix appears exactly at its patch
  t.false(versionTraits("2.7.20").fromRulesCliques);
  t.true(versionTraits("2.7.21").fromRulesCliques);
  t.true(versionTraits("2.7.29").fromRulesCliques);
  t.false(versionTraits("2.7.24").ignoredInboundsSelected);
  t.true(versionTraits("2.7.25").ignoredInboundsSelected);
  t.false(versionTraits("2.13.0").fromRulesCliques);
  t.true(versionTraits("2.13.1").fromRulesCliques);
  t.false(versionTraits("2.13.4").ignoredInboundsSelected);
  t.true(versionTraits("2.13.5").ignoredInboundsSelected);
  t.true(versionTraits("2.10.10").fromRulesCliques);
  t.false(versionTraits("2.10.11").ignoredInboundsSelected); // the 2.10 line ended before #16323
  t.false(versionTraits("2.6.15").fromRulesCliques);
  t.false(versionTraits("2.6.15").ignoredInboundsSelected);
  t.true(versionTraits("2.14").fromRulesCliques && versionTraits("2.14").ignoredInboundsSelected);
  // and a patch row keeps the rest of its minor's row, under its own name
  t.is(versionTraits("2.7.29").routeSpecificitySort, versionTraits("2.7").routeSpecificitySort);
  t.is(versionTraits("2.7.29").version, "2.7.29");
});

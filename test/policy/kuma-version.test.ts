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
test("kuma-version › 3.0.0 reads as the 3.0 preview", parses, "3.0.0", "3.0");
test("kuma-version › a 3.0 pre-release reads as 3.0", parses, "v3.0.0-rc.1", "3.0");
test("kuma-version › a later 3.x follows the 3.0 preview", parses, "3.2", "3.0");
test("kuma-version › 4.0 is not a dialect of this engine", parses, "4.0.0", undefined);
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

test("kuma-version › every documented backport appears at its patch and not one patch before", (t) => {
  // given the backports Kuma's release notes list per minor (kumahq/kuma #12340, #15412, #16323 and their backports)
  const backports: Array<[string, number, "subsetIntersectFixed" | "fromRulesCliques" | "ignoredInboundsSelected"]> = [
    ["2.6", 15, "subsetIntersectFixed"], ["2.7", 11, "subsetIntersectFixed"], ["2.8", 6, "subsetIntersectFixed"], ["2.9", 3, "subsetIntersectFixed"],
    ["2.7", 21, "fromRulesCliques"], ["2.9", 11, "fromRulesCliques"], ["2.10", 10, "fromRulesCliques"], ["2.11", 9, "fromRulesCliques"],
    ["2.12", 6, "fromRulesCliques"], ["2.13", 1, "fromRulesCliques"],
    ["2.7", 25, "ignoredInboundsSelected"], ["2.9", 15, "ignoredInboundsSelected"], ["2.11", 13, "ignoredInboundsSelected"],
    ["2.12", 10, "ignoredInboundsSelected"], ["2.13", 5, "ignoredInboundsSelected"],
  ];
  for (const [minor, patch, fix] of backports) {
    // when reading the release before the backport and the release that carries it
    const before = parseKumaVersion(`${minor}.${patch - 1}`)!;
    const at = parseKumaVersion(`${minor}.${patch}`)!;
    // then the fix is off before and on from its patch, later patches of the minor keep it
    t.false(versionTraits(before)[fix], `${before} ${fix}`);
    t.true(versionTraits(at)[fix], `${at} ${fix}`);
    t.true(versionTraits(parseKumaVersion(`${minor}.${patch + 7}`)!)[fix], `${minor}.${patch + 7} ${fix}`);
  }
});

test("kuma-version › version numbers are read as numbers: leading zeros do not change the release", parses, "v02.07.3", "2.7.3");

test("kuma-version › the 3.0 row is a preview that removes from, subset kinds, ref names and Mesh.mtls", (t) => {
  // given the table; when reading 3.0 against 2.14; then 3.0 differs exactly where Kuma's main branch does
  const v30 = versionTraits("3.0");
  const v214 = versionTraits("2.14");
  t.true(v30.preview);
  t.false(v214.preview);
  t.deepEqual([...v30.fromRemoved].sort(), ["MeshFaultInjection", "MeshRateLimit", "MeshTrafficPermission"]);
  t.is(v30.deprecatedFrom.size, 0, "a removed from is no longer merely deprecated");
  t.is(v214.fromRemoved.size, 0);
  t.is(v30.kindRank.MeshSubset, undefined);
  t.is(v30.kindRank.MeshServiceSubset, undefined);
  t.is(v30.kindRank.MeshGateway, undefined);
  t.is(v30.kindRank.MeshService, v214.kindRank.MeshService, "the kinds that remain keep their rank");
  t.deepEqual([...(v30.topLevelKinds ?? [])].sort(), ["Dataplane", "Mesh"]);
  t.is(v214.topLevelKinds, undefined);
  t.true(v30.labelsOnlyRefs && !v214.labelsOnlyRefs);
  t.is(v30.mtlsFrom, "mesh-identity");
  t.is(v214.mtlsFrom, "mesh");
  t.false(v30.inboundTagsRequired);
  t.false(v30.inspectLegacyRules);
  // and what 3.0 keeps from 2.14
  t.is(v30.mtpRules, "pooled");
  t.true(v30.sniMatches && v30.ruleMatchExpansion && v30.fromRulesCliques);
});

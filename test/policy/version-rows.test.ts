// version-rows › every row of the Kuma version table and every patch-level fix, written from what each Kuma release changed.
import test from "ava";
import { KUMA_VERSIONS, minorOf, parseKumaVersion, splitVersion, versionTraits, type KumaMinor, type KumaVersion, type VersionTraits } from "../../extproc/policy/model/kuma-version.js";
import { KIND_TRAITS } from "../../extproc/policy/model/types.js";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";

/** A row with its sets as sorted arrays and its keys sorted, so rows compare with deepEqual or as JSON text. */
function plain(row: VersionTraits): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(row).sort()) {
    const value = row[key as keyof VersionTraits];
    out[key] = value instanceof Set ? [...value].sort() : value;
  }
  return out;
}

/** JSON text of a row with every object's keys sorted: hundreds of rows compare in a millisecond this way. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v);
}

/** The versions whose row differs from the expected one, each with both rows (empty when all match). */
function differing(expected: Array<[KumaVersion, Record<string, unknown>]>): Array<{ version: string; actual: unknown; expected: unknown }> {
  const out: Array<{ version: string; actual: unknown; expected: unknown }> = [];
  for (const [version, want] of expected) {
    const actual = plain(versionTraits(version));
    if (canonical(actual) !== canonical(want)) out.push({ version, actual, expected: want });
  }
  return out;
}

const MTP = "MeshTrafficPermission";
const MFI = "MeshFaultInjection";
const MRL = "MeshRateLimit";

/** Kuma 2.6.0 as the engine sees it: the oldest behaviour of each trait. */
function kuma26(): Record<string, unknown> {
  return {
    version: "2.6",
    kindRank: { Mesh: 1, MeshSubset: 2, MeshGateway: 3, MeshService: 4, MeshServiceSubset: 5, MeshHTTPRoute: 6 },
    nameWins: "earlier",
    refLabelsNamespaceSection: false,
    optionalTopLevelTargetRef: false,
    sectionNameMatches: "name",
    rulesKinds: [],
    matchesKinds: [],
    sniMatches: false,
    mtpRules: "per-rule",
    ruleMatchExpansion: false,
    meshIdentity: false,
    mtpIdentityRulesPath: false,
    shadowEffect: false,
    roleOrder: "none",
    namespaceAndZoneScoping: false,
    routeSpecificitySort: false,
    routeHeaderCommaSplit: true,
    realServiceKinds: [],
    strictValidation: false,
    deprecatedTopLevelKinds: [],
    deprecatedFrom: [],
    ignoredInboundsSelected: false,
    fromRulesCliques: false,
    subsetIntersectFixed: false,
    preview: false,
    fromRemoved: [],
    labelsOnlyRefs: false,
    mtlsFrom: "mesh",
    inboundTagsRequired: true,
    inspectLegacyRules: true,
  };
}

/** What each release changed against the one before it (2.5: against 2.6, the one thing it does differently). */
function releaseChanges(): Array<[KumaMinor, Record<string, unknown>]> {
  return [
    ["2.6", {}],
    ["2.7", { shadowEffect: true, routeSpecificitySort: true, realServiceKinds: ["MeshService"] }],
    ["2.8", {
      kindRank: { Mesh: 1, MeshSubset: 2, MeshGateway: 3, MeshService: 4, MeshExternalService: 5, MeshServiceSubset: 6, MeshHTTPRoute: 7 },
      refLabelsNamespaceSection: true, roleOrder: "three-level", routeHeaderCommaSplit: false, realServiceKinds: ["MeshExternalService", "MeshService"],
    }],
    ["2.9", {
      kindRank: { Mesh: 1, MeshSubset: 2, MeshGateway: 3, MeshService: 4, MeshExternalService: 5, MeshMultiZoneService: 6, MeshServiceSubset: 7, MeshHTTPRoute: 8 },
      optionalTopLevelTargetRef: true, roleOrder: "four-level", namespaceAndZoneScoping: true,
      realServiceKinds: ["MeshExternalService", "MeshMultiZoneService", "MeshService"], deprecatedTopLevelKinds: ["MeshService"],
    }],
    ["2.10", {
      kindRank: { Mesh: 1, Dataplane: 2, MeshSubset: 3, MeshGateway: 4, MeshService: 5, MeshExternalService: 6, MeshMultiZoneService: 7, MeshServiceSubset: 8, MeshHTTPRoute: 9 },
      subsetIntersectFixed: true, strictValidation: true, deprecatedTopLevelKinds: ["MeshService", "MeshSubset"],
      rulesKinds: [MRL], deprecatedFrom: [MRL],
    }],
    ["2.11", { deprecatedTopLevelKinds: ["MeshService", "MeshServiceSubset", "MeshSubset"] }],
    ["2.12", { sectionNameMatches: "name-or-port", meshIdentity: true, rulesKinds: [MRL, MTP] }],
    ["2.13", { deprecatedTopLevelKinds: ["MeshHTTPRoute", "MeshService", "MeshServiceSubset", "MeshSubset"], rulesKinds: [MFI, MRL, MTP], matchesKinds: [MFI] }],
    ["2.14", {
      sniMatches: true, mtpRules: "pooled", ruleMatchExpansion: true, mtpIdentityRulesPath: true, ignoredInboundsSelected: true, fromRulesCliques: true,
      matchesKinds: [MFI, MRL], deprecatedFrom: [MFI, MRL, MTP],
    }],
    ["3.0", {
      preview: true,
      kindRank: { Mesh: 1, Dataplane: 2, MeshService: 5, MeshExternalService: 6, MeshMultiZoneService: 7, MeshHTTPRoute: 9 },
      labelsOnlyRefs: true, topLevelKinds: ["Dataplane", "Mesh"], mtlsFrom: "mesh-identity", inboundTagsRequired: false, inspectLegacyRules: false,
      deprecatedTopLevelKinds: [], deprecatedFrom: [], fromRemoved: [MFI, MRL, MTP],
    }],
  ];
}

/** The .0 release of every minor, as Kuma's release notes and sources describe it. */
function expectedRows(): Map<KumaMinor, Record<string, unknown>> {
  const rows = new Map<KumaMinor, Record<string, unknown>>();
  rows.set("2.5", { ...kuma26(), version: "2.5", nameWins: "later" });
  let prev = kuma26();
  for (const [version, change] of releaseChanges()) {
    prev = { ...prev, ...change, version };
    rows.set(version, prev);
  }
  return rows;
}

test("version-rows › given each Kuma minor, when its row is read, then every trait is what that release does", (t) => {
  const rows = expectedRows();
  t.deepEqual([...rows.keys()], [...KUMA_VERSIONS], "a row per minor of the table");
  t.deepEqual(differing([...rows]), [], "each Kuma minor's row");
  t.deepEqual(plain(versionTraits()), rows.get("2.14"), "no version given: the default, 2.14");
  t.deepEqual(plain(versionTraits("2.10.0" as KumaVersion)), rows.get("2.10"), "a .0 patch is its minor's row");
});

/** From which patch of a minor each backported fix holds (undefined: never in that minor; 0: from its .0). */
const FIXES: Record<"subsetIntersectFixed" | "fromRulesCliques" | "ignoredInboundsSelected", Partial<Record<KumaMinor, number>>> = {
  // kumahq/kuma #12340, in 2.10.0, backported to 2.6.15, 2.7.11, 2.8.6, 2.9.3
  subsetIntersectFixed: { "2.6": 15, "2.7": 11, "2.8": 6, "2.9": 3, "2.10": 0, "2.11": 0, "2.12": 0, "2.13": 0, "2.14": 0, "3.0": 0 },
  // kumahq/kuma #15412, backports #15463–#15467, #15482
  fromRulesCliques: { "2.7": 21, "2.9": 11, "2.10": 10, "2.11": 9, "2.12": 6, "2.13": 1, "2.14": 0, "3.0": 0 },
  // kumahq/kuma #16323, backports such as #16338 (the 2.8 and 2.10 lines had ended)
  ignoredInboundsSelected: { "2.7": 25, "2.9": 15, "2.11": 13, "2.12": 10, "2.13": 5, "2.14": 0, "3.0": 0 },
};

test("version-rows › given each patch release up to .30, when its row is read, then it holds exactly the fixes backported by that patch", (t) => {
  const rows = expectedRows();
  const expected: Array<[KumaVersion, Record<string, unknown>]> = [];
  for (const minor of KUMA_VERSIONS) {
    for (let patch = 0; patch <= 30; patch++) {
      const v = (patch === 0 ? minor : `${minor}.${patch}`) as KumaVersion;
      const row: Record<string, unknown> = { ...rows.get(minor)!, version: v };
      for (const [trait, since] of Object.entries(FIXES)) {
        const from = since[minor];
        row[trait] = from !== undefined && patch >= from;
      }
      expected.push([v, row]);
    }
  }
  t.deepEqual(differing(expected), [], "each patch release's row");
  t.deepEqual(expected.filter(([v]) => versionTraits(v) !== versionTraits(v)).map(([v]) => v), [], "the same row each time a release is asked");
});

test("version-rows › given version texts, when split and parsed, then minor and patch come out as written", (t) => {
  t.deepEqual(splitVersion("2.7.29"), ["2.7", 29]);
  t.deepEqual(splitVersion("2.10"), ["2.10", 0]);
  t.is(minorOf("2.13.5"), "2.13");
  const cases: Array<[string, string | undefined]> = [
    [" v2.9.3 ", "2.9.3"], ["2.9.3+build.1", "2.9.3"], ["2.10", "2.10"], ["2.10.0", "2.10"], ["3.0.4", "3.0.4"], ["3.1.2", "3.0"], ["2.99", "2.14"],
    ["1.8.0", undefined], ["1.20.0", undefined], ["4.15", undefined], ["2", undefined], ["2.9.", undefined], ["x2.9", undefined], ["2.9.3x", undefined], ["2.x", undefined], ["", undefined],
  ];
  for (const [text, expected] of cases) t.is(parseKumaVersion(text) as string | undefined, expected, JSON.stringify(text));
});

test("version-rows › given the kind registry, when its Kuma facts are read, then they are those of Kuma's plugins at v2.14.3", (t) => {
  // ShortName of each resource descriptor, IsFromAsRules, plugin Order (pkg/plugins/policies/<kind>/plugin/v1alpha1),
  // and the release that gave the kind rules, matches, a deprecated `from` and (main branch) no `from`.
  t.deepEqual(JSON.parse(JSON.stringify(KIND_TRAITS)), {
    MeshTrafficPermission: { shortName: "mtp", fromAsRules: false, pluginOrder: 1100, since: { rules: "2.12", fromDeprecated: "2.14", fromRemoved: "3.0" } },
    MeshFaultInjection: { shortName: "mfi", fromAsRules: false, pluginOrder: 800, since: { rules: "2.13", matches: "2.13", fromDeprecated: "2.14", fromRemoved: "3.0" } },
    MeshRateLimit: { shortName: "mrl", fromAsRules: true, pluginOrder: 900, since: { rules: "2.10", matches: "2.14", fromDeprecated: "2.10", fromRemoved: "3.0" } },
    MeshHTTPRoute: { shortName: "mhttpr", fromAsRules: false, pluginOrder: 100, since: {} },
  });
});

/** A policy of `type` selecting every sidecar of the mesh whose one `from` item holds `conf`. */
function withFrom(type: string, conf: unknown): unknown {
  return { type, mesh: "default", name: "p", spec: { targetRef: { kind: "Mesh", proxyTypes: ["Sidecar"] }, from: [{ targetRef: { kind: "Mesh" }, default: conf }] } };
}

test("version-rows › given a policy with 'from', when validated for each Kuma version, then the deprecation warning appears from the version that deprecated it, with that kind's advice", (t) => {
  const cases: Array<[string, unknown, KumaVersion, string | undefined]> = [
    [MRL, { local: { http: { requestRate: { num: 5, interval: "1s" } } } }, "2.9", undefined],
    [MRL, { local: { http: { requestRate: { num: 5, interval: "1s" } } } }, "2.10", "'from' field is deprecated, use 'rules' instead"],
    [MFI, { http: [{ abort: { httpStatus: 500, percentage: 50 } }] }, "2.13", undefined],
    [MFI, { http: [{ abort: { httpStatus: 500, percentage: 50 } }] }, "2.14", "'from' field is deprecated, use 'rules' with SPIFFE-based 'matches' instead"],
    [MTP, { action: "Allow" }, "2.13", undefined],
    [MTP, { action: "Allow" }, "2.14", "'from' field is deprecated and will be removed in 3.0, use 'rules' with MeshIdentity (spiffeId) instead"],
  ];
  for (const [type, conf, version, message] of cases) {
    const r = validatePolicyObject(withFrom(type, conf), version);
    t.deepEqual(r.violations, [], `${type} at ${version}: valid`);
    const fromWarnings = r.warnings.filter((w) => w.field === "spec.from");
    t.deepEqual(fromWarnings, message === undefined ? [] : [{ field: "spec.from", message }], `${type} at ${version}`);
  }
});

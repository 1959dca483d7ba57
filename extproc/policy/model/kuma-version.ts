// What each Kuma release does with the same policy YAML: the one table the engine's parse, select, sort,
// merge and decide steps read (no version comparisons anywhere else), a row per minor plus the fixes Kuma
// backported to patch releases, and a preview row for 3.0. Sources: Kuma's git tags 2.5.0 … v2.14.3 and its
// master branch for 3.0 (api/common/v1alpha1/ref.go and targetref.go, pkg/plugins/policies/*, UPGRADE.md).
import { KIND_TRAITS, KUMA_VERSIONS, POLICY_TYPES, type KindSince, type KumaMinor, type KumaVersion, type PolicyType, type TargetRefKind } from "./types.js";

export { KUMA_VERSIONS, type KumaMinor, type KumaVersion } from "./types.js";
export const DEFAULT_KUMA_VERSION: KumaVersion = "2.14";

export interface VersionTraits {
  version: KumaVersion;
  /** Top-level/`to` kind rank (`order` map); a kind missing here does not exist in that version. */
  kindRank: Readonly<Partial<Record<TargetRefKind, number>>>;
  /** Same-kind tie-break: "earlier" = lexicographically smaller display name wins (2.6+), "later" before. */
  nameWins: "earlier" | "later";
  /** targetRef `labels` / `namespace` / `sectionName` exist (2.8+). */
  refLabelsNamespaceSection: boolean;
  /** Top-level targetRef may be omitted and then means Mesh (2.9+). */
  optionalTopLevelTargetRef: boolean;
  /** How `sectionName` picks an inbound of a Dataplane: by `name` only (2.10–2.11) or name-else-port (2.12+). */
  sectionNameMatches: "name" | "name-or-port";
  /** Policy kinds with `spec.rules[]`. */
  rulesKinds: ReadonlySet<PolicyType>;
  /** Policy kinds whose rules may carry `matches`; and whether a match may hold `sni`. */
  matchesKinds: ReadonlySet<PolicyType>;
  sniMatches: boolean;
  /** A rule with N `matches` becomes N rules sorted by match specificity (v2.14.0); before, entries stay as written. */
  ruleMatchExpansion: boolean;
  /** MeshIdentity/MeshTrust exist (2.12.0): an identity turns mTLS on whatever the Mesh says; without one, Mesh mTLS off is plaintext. */
  meshIdentity: boolean;
  /** A proxy with a MeshIdentity takes the MTP rules path even without rules (deny all), ignoring `from` (v2.14.0). */
  mtpIdentityRulesPath: boolean;
  /** MTP rules: "pooled" = any deny of any rule wins, then any allow (v2.14.0); "per-rule" = first matching rule in order. */
  mtpRules: "pooled" | "per-rule";
  /** `kuma.io/effect: shadow` policies are left out of decisions (2.7+). */
  shadowEffect: boolean;
  /** Policy-role key of the comparator: none, 3 levels (consumer = workload-owner, 2.8), 4 levels (2.9+). */
  roleOrder: "none" | "three-level" | "four-level";
  /** consumer / workload-owner policies select only Dataplanes of their namespace; zone scoping (2.9+). */
  namespaceAndZoneScoping: boolean;
  /** MeshHTTPRoute rules sorted by match specificity (2.7+). */
  routeSpecificitySort: boolean;
  /** MeshHTTPRoute header modifier values split on commas (up to 2.7). */
  routeHeaderCommaSplit: boolean;
  /** `to[]` may name real MeshService / MeshExternalService / MeshMultiZoneService resources. */
  realServiceKinds: ReadonlySet<TargetRefKind>;
  /** Stricter validation (2.10+): resource names are RFC 1123 subdomains, `proxyTypes: []` is rejected. */
  strictValidation: boolean;
  /** Top-level kinds that validate but draw a deprecation warning. */
  deprecatedTopLevelKinds: ReadonlySet<TargetRefKind>;
  /** Policy kinds whose `from` draws a deprecation warning. */
  deprecatedFrom: ReadonlySet<PolicyType>;
  /** An inbound with `state: Ignored` can be selected (kumahq/kuma #16323); before, no policy selects it. */
  ignoredInboundsSelected: boolean;
  /** Legacy `from` rules are built per maximal clique of intersecting subsets, not per connected component (kumahq/kuma #15412). */
  fromRulesCliques: boolean;
  /** Subset.Intersect skips a key the other subset lacks (kumahq/kuma #12340); before, that key ended the check with "intersects". */
  subsetIntersectFixed: boolean;
  /** Kuma has not released this version yet: it follows Kuma's main branch and may change (3.0). */
  preview: boolean;
  /** Policy kinds whose `from` no longer exists (3.0): a `from` is rejected. */
  fromRemoved: ReadonlySet<PolicyType>;
  /**
   * targetRefs carry only `kind`, `labels` and `sectionName` (3.0, kumahq/kuma #17761, #17668): `name`,
   * `namespace`, `mesh`, `tags` and `proxyTypes` are rejected, kinds a position lacks get Kuma's "value 'X' is
   * not supported".
   */
  labelsOnlyRefs: boolean;
  /** Kinds a top-level targetRef may name at all (3.0: Mesh and Dataplane, kumahq/kuma #17422); undefined: every ranked kind. */
  topLevelKinds?: ReadonlySet<TargetRefKind>;
  /**
   * What says whether a proxy has mTLS, and with it whether MeshTrafficPermission applies: the Mesh resource's
   * `mtls` (2.x), or only a MeshIdentity selecting the proxy (3.0: without one MTP does not apply).
   */
  mtlsFrom: "mesh" | "mesh-identity";
  /** A Dataplane inbound must carry `tags` with `kuma.io/service` (2.x); 3.0 removed inbound tags. */
  inboundTagsRequired: boolean;
  /** `_rules` entries carry the legacy `fromRules` / `toRules` (2.x); 3.0 dropped both. */
  inspectLegacyRules: boolean;
}

const RANK_26 = { Mesh: 1, MeshSubset: 2, MeshGateway: 3, MeshService: 4, MeshServiceSubset: 5, MeshHTTPRoute: 6 } as const;
const RANK_28 = { Mesh: 1, MeshSubset: 2, MeshGateway: 3, MeshService: 4, MeshExternalService: 5, MeshServiceSubset: 6, MeshHTTPRoute: 7 } as const;
const RANK_29 = { ...RANK_28, MeshMultiZoneService: 6, MeshServiceSubset: 7, MeshHTTPRoute: 8 } as const;
const RANK_210 = { Mesh: 1, Dataplane: 2, MeshSubset: 3, MeshGateway: 4, MeshService: 5, MeshExternalService: 6, MeshMultiZoneService: 7, MeshServiceSubset: 8, MeshHTTPRoute: 9 } as const;
/** Kuma's main branch (3.0) keeps the 2.10 numbers of the kinds that remain (api/common/v1alpha1/targetref.go `order`). */
const RANK_30 = { Mesh: 1, Dataplane: 2, MeshService: 5, MeshExternalService: 6, MeshMultiZoneService: 7, MeshHTTPRoute: 9 } as const;

const none = <T>(): ReadonlySet<T> => new Set<T>();

const BASE: VersionTraits = {
  version: "2.6",
  kindRank: RANK_26,
  nameWins: "earlier",
  refLabelsNamespaceSection: false,
  optionalTopLevelTargetRef: false,
  sectionNameMatches: "name",
  rulesKinds: none(),
  matchesKinds: none(),
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
  realServiceKinds: none(),
  strictValidation: false,
  deprecatedTopLevelKinds: none(),
  deprecatedFrom: none(),
  ignoredInboundsSelected: false,
  fromRulesCliques: false,
  subsetIntersectFixed: false,
  preview: false,
  fromRemoved: none(),
  labelsOnlyRefs: false,
  mtlsFrom: "mesh",
  inboundTagsRequired: true,
  inspectLegacyRules: true,
};

/**
 * Each row changes only what that version changed; later rows start from the one before. What a version changed
 * about one policy kind (rules, matches, a deprecated `from`) is in that kind's KIND_TRAITS entry (types.ts).
 */
const CHANGES: ReadonlyArray<[KumaMinor, Partial<VersionTraits>]> = [
  ["2.5", { nameWins: "later" }],
  ["2.6", {}],
  ["2.7", { shadowEffect: true, routeSpecificitySort: true, realServiceKinds: new Set(["MeshService"]) }],
  ["2.8", { kindRank: RANK_28, refLabelsNamespaceSection: true, roleOrder: "three-level", routeHeaderCommaSplit: false, realServiceKinds: new Set(["MeshService", "MeshExternalService"]) }],
  ["2.9", { kindRank: RANK_29, optionalTopLevelTargetRef: true, roleOrder: "four-level", namespaceAndZoneScoping: true, realServiceKinds: new Set(["MeshService", "MeshExternalService", "MeshMultiZoneService"]), deprecatedTopLevelKinds: new Set(["MeshService"]) }],
  ["2.10", { subsetIntersectFixed: true, kindRank: RANK_210, strictValidation: true, deprecatedTopLevelKinds: new Set(["MeshService", "MeshSubset"]) }],
  ["2.11", { deprecatedTopLevelKinds: new Set(["MeshService", "MeshSubset", "MeshServiceSubset"]) }],
  ["2.12", { sectionNameMatches: "name-or-port", meshIdentity: true }],
  ["2.13", { deprecatedTopLevelKinds: new Set(["MeshService", "MeshSubset", "MeshServiceSubset", "MeshHTTPRoute"]) }],
  ["2.14", { sniMatches: true, mtpRules: "pooled", ruleMatchExpansion: true, mtpIdentityRulesPath: true, ignoredInboundsSelected: true, fromRulesCliques: true }],
  // Preview of Kuma's main branch (UPGRADE.md "Upgrade to 3.0.0"): `from`, MeshSubset, MeshServiceSubset,
  // MeshGateway refs, top-level MeshService, ref names/tags/proxyTypes, Mesh.mtls and inbound tags are gone.
  ["3.0", {
    preview: true,
    kindRank: RANK_30,
    labelsOnlyRefs: true,
    topLevelKinds: new Set(["Mesh", "Dataplane"]),
    mtlsFrom: "mesh-identity",
    inboundTagsRequired: false,
    inspectLegacyRules: false,
    deprecatedTopLevelKinds: none(),
  }],
];

/**
 * Fixes Kuma backported to patch releases: from that patch of its minor on, the change holds (a minor alone
 * means its .0). 2.14.0 has them all from the start (its row above).
 * - cliques (kumahq/kuma #15412, backports #15463–#15467, #15482): 2.7.21, 2.9.11, 2.10.10, 2.11.9, 2.12.6, 2.13.1
 * - ignored inbounds selectable (kumahq/kuma #16323, backports such as #16338): 2.7.25, 2.9.15, 2.11.13, 2.12.10, 2.13.5
 * - the subset intersection check fixed (kumahq/kuma #12340, in 2.10.0): 2.6.15, 2.7.11, 2.8.6, 2.9.3
 */
const PATCHES: ReadonlyArray<[KumaMinor, number, Partial<VersionTraits>]> = [
  ["2.6", 15, { subsetIntersectFixed: true }],
  ["2.7", 11, { subsetIntersectFixed: true }],
  ["2.8", 6, { subsetIntersectFixed: true }],
  ["2.9", 3, { subsetIntersectFixed: true }],
  ["2.7", 21, { fromRulesCliques: true }],
  ["2.7", 25, { ignoredInboundsSelected: true }],
  ["2.9", 11, { fromRulesCliques: true }],
  ["2.9", 15, { ignoredInboundsSelected: true }],
  ["2.10", 10, { fromRulesCliques: true }],
  ["2.11", 9, { fromRulesCliques: true }],
  ["2.11", 13, { ignoredInboundsSelected: true }],
  ["2.12", 6, { fromRulesCliques: true }],
  ["2.12", 10, { ignoredInboundsSelected: true }],
  ["2.13", 1, { fromRulesCliques: true }],
  ["2.13", 5, { ignoredInboundsSelected: true }],
];

const TABLE: ReadonlyMap<KumaMinor, VersionTraits> = (() => {
  const out = new Map<KumaMinor, VersionTraits>();
  let prev = BASE;
  for (const [version, change] of CHANGES) {
    // 2.5 only differs from 2.6 by the tie-break: it is a branch off the base, not a step before it.
    const from = version === "2.6" ? BASE : prev;
    const row = { ...from, ...change, version, ...kindSets(version) };
    out.set(version, row);
    if (version !== "2.5") prev = row;
  }
  return out;
})();

/** The kinds whose KIND_TRAITS `since` says `version` has each feature. */
function kindSets(version: KumaMinor): Pick<VersionTraits, "rulesKinds" | "matchesKinds" | "deprecatedFrom" | "fromRemoved"> {
  const has = (feature: keyof KindSince): ReadonlySet<PolicyType> => {
    const at = KUMA_VERSIONS.indexOf(version);
    return new Set(POLICY_TYPES.filter((k) => {
      const since = KIND_TRAITS[k].since[feature];
      return since !== undefined && KUMA_VERSIONS.indexOf(since) <= at;
    }));
  };
  const removed = has("fromRemoved");
  const deprecated = new Set([...has("fromDeprecated")].filter((k) => !removed.has(k)));
  return { rulesKinds: has("rules"), matchesKinds: has("matches"), deprecatedFrom: deprecated, fromRemoved: removed };
}

/** Every version's row as versionTraits gave it: asked once per document validated, so not split again each time. */
const TRAITS_OF = new Map<KumaVersion, VersionTraits>();

/** The row of `v`'s minor with the fixes its patch level carries. */
export function versionTraits(v: KumaVersion = DEFAULT_KUMA_VERSION): VersionTraits {
  const known = TRAITS_OF.get(v);
  if (known !== undefined) return known;
  const traits = traitsOf(v);
  if (traits !== undefined) TRAITS_OF.set(v, traits);
  return traits;
}

function traitsOf(v: KumaVersion): VersionTraits {
  const [minor, patch] = splitVersion(v);
  const row = TABLE.get(minor)!;
  if (patch === 0) return row;
  const patched = { ...row, version: v };
  for (const [m, p, change] of PATCHES) if (m === minor && p <= patch) Object.assign(patched, change);
  return patched;
}

/** "2.7.29" → ["2.7", 29]; "2.7" → ["2.7", 0]. */
export function splitVersion(v: KumaVersion): [KumaMinor, number] {
  const parts = v.split(".");
  return [`${parts[0]}.${parts[1]}` as KumaMinor, parts[2] !== undefined ? Number(parts[2]) : 0];
}

/** The minor of a release: its row of the table. */
export function minorOf(v: KumaVersion): KumaMinor {
  return splitVersion(v)[0];
}

/**
 * "2.14", "2.14.3", "v2.7.29", "2.13.5-rc.1" → the release that decides like it, patch level kept ("2.7.29"; a
 * pre-release of a patch counts as that patch): 2.x versions newer than 2.14 follow 2.14, 3.x ones the 3.0
 * preview row, older ones are undefined (not supported).
 */
export function parseKumaVersion(text: string): KumaVersion | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[\-+].*)?$/.exec(text.trim());
  if (!m) return undefined;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  if (major !== 2 && major !== 3) return undefined;
  const exact = KUMA_VERSIONS.find((v) => v === `${major}.${minor}`);
  if (!exact) return major === 3 ? "3.0" : minor > 14 ? "2.14" : undefined;
  const patch = m[3] !== undefined ? Number(m[3]) : 0;
  return patch > 0 ? `${exact}.${patch}` : exact;
}

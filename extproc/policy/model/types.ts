// Policy model shared by the pure policy engine: normalized Kuma targetRef policies, violations, tags.
// Pure types only; nothing here may import node:*, @grpc/* or the transport.

export const POLICY_TYPES = ["MeshTrafficPermission", "MeshFaultInjection", "MeshRateLimit", "MeshHTTPRoute"] as const;
export type PolicyType = (typeof POLICY_TYPES)[number];

export const KUMA_VERSIONS = ["2.5", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.13", "2.14", "3.0"] as const;
/** A Kuma minor version whose policy semantics the engine reproduces (its traits: kuma-version.ts); 3.0 is a preview of Kuma's main branch. */
export type KumaMinor = (typeof KUMA_VERSIONS)[number];
/** A Kuma release whose policy semantics the engine reproduces: a minor ("2.7", meaning its .0) or a patch ("2.7.29"). */
export type KumaVersion = KumaMinor | `${KumaMinor}.${number}`;

/** The Kuma version that brought a kind's feature (kuma-version.ts turns these into each version's kind sets). */
export interface KindSince {
  /** `spec.rules[]` (2.10+ by kind, Kuma's UPGRADE.md). */
  rules?: KumaMinor;
  /** `matches` in its rules. */
  matches?: KumaMinor;
  /** `from` deprecated (its `Deprecations()` in deprecated.go warns). */
  fromDeprecated?: KumaMinor;
  /** `from` removed from the kind's spec (Kuma's main branch, 3.0: UPGRADE.md "`from` removed from …"). */
  fromRemoved?: KumaMinor;
}

/**
 * The model's registry of kinds, one entry per kind: what Kuma says of each kind beyond its spec — its short
 * name (`ShortName` of its resource descriptor), whether its `from` items count as catch-all rules
 * (`IsFromAsRules`), its plugin's `Order` (the order of the inspect view's rules:
 * pkg/plugins/policies/<kind>/plugin/v1alpha1/plugin.go at v2.14.3) — and the versions that changed it (3.0: Kuma's
 * main branch, whose commits "remove deprecated from" #17507, #17608, #17628 drop `from`).
 */
export const KIND_TRAITS: Readonly<Record<PolicyType, { shortName: string; fromAsRules: boolean; pluginOrder: number; since: KindSince }>> = {
  MeshTrafficPermission: { shortName: "mtp", fromAsRules: false, pluginOrder: 1100, since: { rules: "2.12", fromDeprecated: "2.14", fromRemoved: "3.0" } },
  MeshFaultInjection: { shortName: "mfi", fromAsRules: false, pluginOrder: 800, since: { rules: "2.13", matches: "2.13", fromDeprecated: "2.14", fromRemoved: "3.0" } },
  MeshRateLimit: { shortName: "mrl", fromAsRules: true, pluginOrder: 900, since: { rules: "2.10", matches: "2.14", fromDeprecated: "2.10", fromRemoved: "3.0" } },
  MeshHTTPRoute: { shortName: "mhttpr", fromAsRules: false, pluginOrder: 100, since: {} },
};

export const TARGET_REF_KINDS = [
  "Mesh",
  "Dataplane",
  "MeshSubset",
  "MeshGateway",
  "MeshService",
  "MeshExternalService",
  "MeshMultiZoneService",
  "MeshServiceSubset",
  "MeshHTTPRoute",
] as const;
export type TargetRefKind = (typeof TARGET_REF_KINDS)[number];

export type ProxyType = "Sidecar" | "Gateway";

/** One problem with an input document: a dotted/indexed field path and a message. */
export interface Violation {
  field: string;
  message: string;
}

export interface TargetRef {
  kind: TargetRefKind;
  name?: string;
  tags?: Record<string, string>;
  proxyTypes?: ProxyType[];
  /** 2.8+: real-resource and Dataplane refs. */
  labels?: Record<string, string>;
  namespace?: string;
  sectionName?: string;
}

/** One `matches[]` entry of an inbound rule (or an MTP allow/deny list entry): both fields must hold. */
export interface RuleMatch {
  spiffeID?: { type: "Exact" | "Prefix"; value: string };
  sni?: { type: "Exact"; value: string };
}

/** A `spec.rules[]` entry (2.10+): optional matches (ORed), and the conf. */
export interface InboundRule {
  matches?: RuleMatch[];
  default: Record<string, unknown>;
}

/** A `from[]` / `to[]` item: a targetRef and the conf (`default`) it contributes. */
export interface DirectionalItem {
  targetRef: TargetRef;
  default?: Record<string, unknown>;
}

/** MeshHTTPRoute `to[]` item: rules instead of a single default. */
export interface RouteToItem {
  targetRef: TargetRef;
  hostnames?: string[];
  rules: RouteRule[];
}

export interface RouteRule {
  matches: RouteMatch[];
  default: { filters?: RouteFilter[]; backendRefs?: unknown[] };
}

export interface RouteMatch {
  path?: { type: "Exact" | "PathPrefix" | "RegularExpression"; value: string };
  method?: string;
  headers?: Array<{ type?: "Exact" | "Present" | "RegularExpression" | "Absent" | "Prefix"; name: string; value?: string }>;
  queryParams?: Array<{ type: "Exact" | "RegularExpression"; name: string; value: string }>;
}

export interface HeaderModifier {
  set?: Array<{ name: string; value: string }>;
  add?: Array<{ name: string; value: string }>;
  remove?: string[];
}

export interface RouteFilter {
  type: "RequestHeaderModifier" | "ResponseHeaderModifier" | "RequestRedirect" | "URLRewrite" | "RequestMirror";
  requestHeaderModifier?: HeaderModifier;
  responseHeaderModifier?: HeaderModifier;
  [other: string]: unknown;
}

export interface PolicySpec {
  /** Normalized: an absent top-level targetRef (2.9+) reads as `{kind: Mesh}`. */
  targetRef: TargetRef;
  from?: DirectionalItem[];
  to?: Array<DirectionalItem | RouteToItem>;
  rules?: InboundRule[];
}

/** `kuma.io/policy-role`: system < producer < consumer < workload-owner. */
export type PolicyRole = "system" | "producer" | "consumer" | "workload-owner";

export type Origin = "global" | "zone";

/** A validated policy in one normalized shape, whatever form (universal or CRD) it came in. */
export interface Policy {
  type: PolicyType;
  mesh: string;
  name: string;
  /** CRD form only. */
  namespace?: string;
  labels: Record<string, string>;
  spec: PolicySpec;
  /** From label `kuma.io/origin` when it is `global` or `zone`. */
  origin?: Origin;
  /** `kuma.io/display-name` label if present, else name: the precedence tie-break key. */
  displayName: string;
  /** Where it was read from (file path, URL), for logs. */
  source?: string;
  /** Label `kuma.io/policy-role`, else computed for namespaced (Kubernetes) policies, else system. */
  role: PolicyRole;
  /** Label `k8s.kuma.io/namespace`, else the CRD's metadata.namespace. */
  k8sNamespace?: string;
  /** Label `kuma.io/zone`. */
  zone?: string;
  /** Label `kuma.io/effect: shadow`: visible in inspection, left out of decisions (2.7+). */
  shadow: boolean;
  /** The YAML had no top-level targetRef. */
  implicitTargetRef?: boolean;
  /** Kuma's deprecation warnings for this policy (it still loads). */
  warnings: Violation[];
}

/** A tag in a subset: key = value, or key ≠ value when `not`. */
export interface Tag {
  key: string;
  value: string;
  not: boolean;
}

/** A client's (or inbound's) tags; clients may carry several values per key. */
export type TagSet = ReadonlyMap<string, ReadonlySet<string>>;

export function policyKey(p: Pick<Policy, "type" | "mesh" | "name">): string {
  return `${p.type}/${p.mesh}/${p.name}`;
}

/** A policy (or document) the source refused; when it replaced a good version, that version stays in force. */
export interface RejectedPolicy {
  kind?: string;
  name?: string;
  /** Where it came from: a file path or a control-plane URL. */
  source?: string;
  /** True when an earlier good version of this policy is still in force. */
  keptLastGood: boolean;
  violations: Violation[];
}

/** Which policy rule a conf (or one element of a fault list) came from, for explanations. */
export interface ConfSource {
  policy: string;
  rule: string;
}

// The Kuma REST resource types meshext serves and fetches: kind ↔ plural path, plus the list-page shape.
// Shared by the embedded control plane (server) and the HTTP policy source (client) so the two agree.

export interface ResourceType {
  /** `type` field of the resource, e.g. "MeshTrafficPermission". */
  kind: string;
  /** Path segment, e.g. "meshtrafficpermissions". */
  plural: string;
  /** Kuma's descriptor as `GET /_resources` reports it (v2.14: `zz_generated.resource.go` of each type). */
  describe?: TypeDescription;
}

/** What Kuma's `/_resources` says about a type besides name, path and scope. */
export interface TypeDescription {
  shortName: string;
  singularDisplayName: string;
  pluralDisplayName: string;
  /** Kuma: synced from global to zones (and not read-only). */
  includeInFederation: boolean;
  policy?: { isTargetRef: boolean; hasToTargetRef: boolean; hasFromTargetRef: boolean; hasRulesTargetRef: boolean; isFromAsRules: boolean };
}

const targetRefPolicy = (to: boolean, from: boolean, rules: boolean, fromAsRules: boolean) => ({
  isTargetRef: true,
  hasToTargetRef: to,
  hasFromTargetRef: from,
  hasRulesTargetRef: rules,
  isFromAsRules: fromAsRules,
});

/** Policy kinds the sidecar decides with; fetched by the client and validated on PUT by the server. */
export const POLICY_TYPES: readonly ResourceType[] = [
  {
    kind: "MeshTrafficPermission",
    plural: "meshtrafficpermissions",
    describe: { shortName: "mtp", singularDisplayName: "Mesh Traffic Permission", pluralDisplayName: "Mesh Traffic Permissions", includeInFederation: true, policy: targetRefPolicy(false, true, true, false) },
  },
  {
    kind: "MeshFaultInjection",
    plural: "meshfaultinjections",
    describe: { shortName: "mfi", singularDisplayName: "Mesh Fault Injection", pluralDisplayName: "Mesh Fault Injections", includeInFederation: true, policy: targetRefPolicy(true, true, true, false) },
  },
  {
    kind: "MeshRateLimit",
    plural: "meshratelimits",
    describe: { shortName: "mrl", singularDisplayName: "Mesh Rate Limit", pluralDisplayName: "Mesh Rate Limits", includeInFederation: true, policy: targetRefPolicy(true, true, true, true) },
  },
  {
    kind: "MeshHTTPRoute",
    plural: "meshhttproutes",
    describe: { shortName: "mhttpr", singularDisplayName: "Mesh HTTP Route", pluralDisplayName: "Mesh HTTP Routes", includeInFederation: true, policy: targetRefPolicy(true, false, false, false) },
  },
];

export const DATAPLANE_TYPE: ResourceType = {
  kind: "Dataplane",
  plural: "dataplanes",
  describe: { shortName: "dp", singularDisplayName: "Dataplane", pluralDisplayName: "Dataplanes", includeInFederation: false },
};

/** Destinations that `to[].targetRef` names (Kuma 2.7+): stored, served and fetched like the policies. */
export const SERVICE_TYPES: readonly ResourceType[] = [
  {
    kind: "MeshService",
    plural: "meshservices",
    describe: { shortName: "msvc", singularDisplayName: "Mesh Service", pluralDisplayName: "Mesh Services", includeInFederation: false },
  },
  {
    kind: "MeshExternalService",
    plural: "meshexternalservices",
    describe: { shortName: "extsvc", singularDisplayName: "Mesh External Service", pluralDisplayName: "Mesh External Services", includeInFederation: true },
  },
  {
    kind: "MeshMultiZoneService",
    plural: "meshmultizoneservices",
    describe: { shortName: "mzsvc", singularDisplayName: "Mesh Multi Zone Service", pluralDisplayName: "Mesh Multi Zone Services", includeInFederation: true },
  },
];

/**
 * Workload identity (Kuma 2.12+): which SPIFFE identity a Dataplane gets (MeshIdentity) and which trust domains the
 * mesh accepts (MeshTrust); stored, served and fetched like the service kinds, validated by the engine's reader.
 */
export const IDENTITY_TYPES: readonly ResourceType[] = [
  {
    kind: "MeshIdentity",
    plural: "meshidentities",
    describe: { shortName: "mid", singularDisplayName: "Mesh Identity", pluralDisplayName: "Mesh Identities", includeInFederation: true },
  },
  {
    kind: "MeshTrust",
    plural: "meshtrusts",
    describe: { shortName: "mtrust", singularDisplayName: "Mesh Trust", pluralDisplayName: "Mesh Trusts", includeInFederation: true },
  },
];

/** Every mesh-scoped type: served at /meshes/{mesh}/{plural}[/{name}] and /{plural}. */
export const ALL_TYPES: readonly ResourceType[] = [...POLICY_TYPES, ...SERVICE_TYPES, ...IDENTITY_TYPES, DATAPLANE_TYPE];

export function typeByPlural(plural: string): ResourceType | undefined {
  return ALL_TYPES.find((t) => t.plural === plural);
}

/** Kuma's Mesh: a global resource at /meshes/{name}, universal form flattened (`mtls` at the top level, no `spec`). */
export const MESH_TYPE: ResourceType = {
  kind: "Mesh",
  plural: "meshes",
  describe: { shortName: "m", singularDisplayName: "Mesh", pluralDisplayName: "Meshes", includeInFederation: true },
};

/** Sidecar injection patches (Kuma's ContainerPatch); fetched by `meshext inject --control-plane`. */
export const CONTAINER_PATCH_TYPE: ResourceType = {
  kind: "ContainerPatch",
  plural: "containerpatches",
  describe: { shortName: "cp", singularDisplayName: "Container Patch", pluralDisplayName: "Container Patches", includeInFederation: false },
};

/** Types outside any mesh (Kuma's "Global" scope): served at /{plural}[/{name}], with no `mesh` field. */
export const GLOBAL_TYPES: readonly ResourceType[] = [MESH_TYPE, CONTAINER_PATCH_TYPE];

export function globalTypeByPlural(plural: string): ResourceType | undefined {
  return GLOBAL_TYPES.find((t) => t.plural === plural);
}

/** A resource as stored and served: Kuma's universal JSON (flattened for Dataplane). */
export type Resource = Record<string, unknown> & { type: string; mesh: string; name: string };

/** A global resource as stored and served: Kuma's universal JSON without `mesh`. */
export type GlobalResource = Record<string, unknown> & { type: string; name: string };

/** Kuma's list page: `total` counts every match, `next` is an absolute URL or null on the last page. */
export interface ListPage<T = Resource> {
  total: number;
  items: T[];
  next: string | null;
}

/** Kuma's default and maximum page sizes. */
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;


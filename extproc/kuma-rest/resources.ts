// The Kuma REST resource types meshext serves and fetches: kind ↔ plural path, plus the list-page shape.
// Shared by the embedded control plane (server) and the HTTP policy source (client) so the two agree.

export interface ResourceType {
  /** `type` field of the resource, e.g. "MeshTrafficPermission". */
  kind: string;
  /** Path segment, e.g. "meshtrafficpermissions". */
  plural: string;
}

/** Policy kinds the sidecar decides with; fetched by the client and validated on PUT by the server. */
export const POLICY_TYPES: readonly ResourceType[] = [
  { kind: "MeshTrafficPermission", plural: "meshtrafficpermissions" },
  { kind: "MeshFaultInjection", plural: "meshfaultinjections" },
  { kind: "MeshRateLimit", plural: "meshratelimits" },
  { kind: "MeshHTTPRoute", plural: "meshhttproutes" },
];

export const DATAPLANE_TYPE: ResourceType = { kind: "Dataplane", plural: "dataplanes" };

/** Every mesh-scoped type: served at /meshes/{mesh}/{plural}[/{name}] and /{plural}. */
export const ALL_TYPES: readonly ResourceType[] = [...POLICY_TYPES, DATAPLANE_TYPE];

export function typeByPlural(plural: string): ResourceType | undefined {
  return ALL_TYPES.find((t) => t.plural === plural);
}

/** Sidecar injection patches (Kuma's ContainerPatch); fetched by `meshext inject --control-plane`. */
export const CONTAINER_PATCH_TYPE: ResourceType = { kind: "ContainerPatch", plural: "containerpatches" };

/** Types outside any mesh (Kuma's "Global" scope): served at /{plural}[/{name}], with no `mesh` field. */
export const GLOBAL_TYPES: readonly ResourceType[] = [CONTAINER_PATCH_TYPE];

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

/** Mesh and resource names: DNS-label-like, so a name is always a safe file name. */
export const NAME_PATTERN = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,251}[A-Za-z0-9])?$/;

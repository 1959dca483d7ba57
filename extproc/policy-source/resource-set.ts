// What a control-plane policy source fetches besides the policies — the mesh's `Mesh` resource (mTLS state)
// and the MeshService / MeshExternalService / MeshMultiZoneService resources `to[]` names — and how one
// fetched (or cached) batch is validated item by item into the set handed to the engine.
import { meshViolations } from "../kuma-rest/mesh-resource.js";
import { MESH_TYPE, POLICY_TYPES, type Resource, type ResourceType, SERVICE_TYPES } from "../kuma-rest/resources.js";
import { serviceResourceViolations } from "../kuma-rest/service-resources.js";
import { validatePolicyObject, type Policy, type Violation } from "../policy/parse.js";
import type { MeshResources } from "./source.js";

/** Every list a sync reads: the policy kinds, the service kinds, and the meshes list (for this mesh's Mesh). */
export const FETCHED_TYPES: readonly ResourceType[] = [...POLICY_TYPES, ...SERVICE_TYPES, MESH_TYPE];

/** A server without this list (404: Kuma before 2.7 has no MeshService) just has none of it; policies are required. */
export function isOptionalType(type: ResourceType): boolean {
  return !POLICY_TYPES.includes(type);
}

export interface RejectedItem {
  kind: unknown;
  name: unknown;
  violations: Violation[];
}

export interface ValidatedSet {
  policies: Policy[];
  resources: MeshResources;
  /** The items that passed, as served (what the cache file keeps). */
  good: Resource[];
  rejected: RejectedItem[];
}

/** Validates every item on its own: invalid ones are reported, the rest make the set. Meshes other than `mesh` are dropped. */
export function validateFetched(items: readonly Resource[], mesh: string, sourceOf?: (item: Resource) => string): ValidatedSet {
  const set: ValidatedSet = { policies: [], resources: { services: [] }, good: [], rejected: [] };
  for (const item of items) {
    const kind = (item as { type?: unknown } | null)?.type;
    if (kind === MESH_TYPE.kind && item.name !== mesh) continue;
    const violations = check(item, kind);
    if (violations.length) {
      set.rejected.push({ kind, name: (item as { name?: unknown } | null)?.name, violations });
      continue;
    }
    set.good.push(item);
    if (kind === MESH_TYPE.kind) set.resources.mesh = item;
    else if (SERVICE_TYPES.some((t) => t.kind === kind)) set.resources.services.push(item);
    else {
      const { policy } = validatePolicyObject(item);
      if (sourceOf) policy!.source = sourceOf(item);
      set.policies.push(policy!);
    }
  }
  return set;
}

function check(item: Resource, kind: unknown): Violation[] {
  if (kind === MESH_TYPE.kind) return meshViolations(item.name, item);
  if (typeof kind === "string" && SERVICE_TYPES.some((t) => t.kind === kind)) return serviceResourceViolations(kind, item);
  return validatePolicyObject(item).violations;
}

// What a control-plane policy source fetches besides the policies — the mesh's `Mesh` resource (mTLS state),
// the MeshService / MeshExternalService / MeshMultiZoneService resources `to[]` names, and the MeshIdentity /
// MeshTrust resources (2.12+: workload identity and trust domains) — and how one
// fetched (or cached) batch is validated item by item into the set handed to the engine.
import { meshViolations } from "../kuma-rest/mesh-resource.js";
import { IDENTITY_TYPES, MESH_TYPE, POLICY_TYPES, type Resource, type ResourceType, SERVICE_TYPES } from "../kuma-rest/resources.js";
import { identityResourceViolations, isIdentityKind } from "../kuma-rest/identity-resources.js";
import { serviceResourceViolations } from "../kuma-rest/service-resources.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";
import { validatePolicyObject, type Policy, type Violation } from "../policy/documents/parse.js";
import { type MeshResources, type Resource as EngineResource, resourceFromObject, resourcesOf } from "../policy/documents/resources.js";

/** Every list a sync reads: the policy kinds, the service and identity kinds, and the meshes list (for this mesh's Mesh). */
export const FETCHED_TYPES: readonly ResourceType[] = [...POLICY_TYPES, ...SERVICE_TYPES, ...IDENTITY_TYPES, MESH_TYPE];

/**
 * A server without this list (404: Kuma before 2.7 has no MeshService, before 2.12 no MeshIdentity) just has
 * none of it; policies are required.
 */
export function isOptionalType(type: ResourceType): boolean {
  return !POLICY_TYPES.includes(type);
}

export interface RejectedItem {
  kind?: string;
  name?: string;
  violations: Violation[];
}

export interface ValidatedSet {
  policies: Policy[];
  resources: MeshResources;
  /** The items that passed, as served (what the cache file keeps). */
  good: Resource[];
  rejected: RejectedItem[];
}

/**
 * Validates every item on its own, policies by the rules of `kumaVersion`: invalid ones are reported, the rest
 * make the set (Mesh and service resources read into the engine's form). Meshes other than `mesh` are dropped.
 */
export function validateFetched(items: readonly Resource[], mesh: string, kumaVersion?: KumaVersion, sourceOf?: (item: Resource) => string): ValidatedSet {
  const set: ValidatedSet = { policies: [], resources: resourcesOf([]), good: [], rejected: [] };
  const resources: EngineResource[] = [];
  for (const item of items) {
    const kind = (item as { type?: unknown } | null)?.type;
    if (kind === MESH_TYPE.kind && item.name !== mesh) continue;
    // The embedded control plane lists a mesh that only holds resources as a bare {type, name}: no Mesh was
    // stored, so its mTLS state is unknown (MeshTrafficPermission applies as in 2.6). Stored Meshes, and every
    // Mesh of a real Kuma, carry creationTime.
    if (kind === MESH_TYPE.kind && (item as { creationTime?: unknown }).creationTime === undefined) continue;
    const name = (item as { name?: unknown } | null)?.name;
    const reject = (violations: Violation[]) =>
      set.rejected.push({ ...(typeof kind === "string" ? { kind } : {}), ...(typeof name === "string" ? { name } : {}), violations });
    if (kind === MESH_TYPE.kind || SERVICE_TYPES.some((t) => t.kind === kind) || isIdentityKind(kind)) {
      const { resource, violations } = readResource(item, kind as string);
      if (!resource) reject(violations);
      else {
        resources.push(resource);
        set.good.push(item);
      }
      continue;
    }
    const { policy, violations } = validatePolicyObject(item, kumaVersion);
    if (!policy) {
      reject(violations);
      continue;
    }
    if (sourceOf) policy.source = sourceOf(item);
    set.policies.push(policy);
    set.good.push(item);
  }
  set.resources = resourcesOf(resources);
  return set;
}

/** Deepest nesting accepted in one fetched item (the YAML bound's depth); deeper ones are rejected unread. */
export const MAX_ITEM_DEPTH = 64;

/** Whether `value` nests deeper than `maxDepth` (iterative: a 100 000-deep item must not overflow the stack). */
export function nestsDeeperThan(value: unknown, maxDepth: number = MAX_ITEM_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth >= maxDepth) return true;
    for (const child of Object.values(v)) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}

/** A Mesh, service or identity resource: Kuma's validation, then the engine's reading of it. */
function readResource(item: Resource, kind: string): { resource?: EngineResource; violations: Violation[] } {
  const violations = kind === MESH_TYPE.kind ? meshViolations(item.name, item) : isIdentityKind(kind) ? identityResourceViolations(item) : serviceResourceViolations(kind, item);
  return violations.length ? { violations } : resourceFromObject(item);
}

/** Timestamps alone do not make a new policy set (whether there is one does: a bare mesh is not a stored Mesh). */
export function stripVolatile(r: Resource): unknown {
  if (!r || typeof r !== "object") return r;
  const { creationTime, modificationTime: _m, ...rest } = r;
  return creationTime === undefined ? rest : { ...rest, stored: true };
}

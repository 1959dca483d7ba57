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
import type { ItemOutcome, ValidationMemo } from "./validation-memo.js";

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
export function validateFetched(items: readonly Resource[], mesh: string, kumaVersion?: KumaVersion, sourceOf?: (item: Resource) => string, memo?: { texts: readonly string[]; memo: ValidationMemo }): ValidatedSet {
  const set: ValidatedSet = { policies: [], resources: resourcesOf([]), good: [], rejected: [] };
  const resources: EngineResource[] = [];
  memo?.memo.begin(kumaVersion);
  items.forEach((item, i) => {
    const kind = (item as { type?: unknown } | null)?.type;
    if (kind === MESH_TYPE.kind && item.name !== mesh) return;
    // The embedded control plane lists a mesh that only holds resources as a bare {type, name}: no Mesh was
    // stored, so its mTLS state is unknown (MeshTrafficPermission applies as in 2.6). Stored Meshes, and every
    // Mesh of a real Kuma, carry creationTime.
    if (kind === MESH_TYPE.kind && (item as { creationTime?: unknown }).creationTime === undefined) return;
    const name = (item as { name?: unknown } | null)?.name;
    // A result from the memo is for the same text, so for the same kind, mesh and name: its policy's source
    // (made of those, by the one sourceOf a memo's owner passes) is already what sourceOf would make again.
    const known = memo?.memo.known(memo.texts[i]!);
    const outcome = known ?? validateItem(item, kind, kumaVersion);
    memo?.memo.keep(memo.texts[i]!, outcome, known !== undefined);
    if ("violations" in outcome) {
      set.rejected.push({ ...(typeof kind === "string" ? { kind } : {}), ...(typeof name === "string" ? { name } : {}), violations: outcome.violations });
      return;
    }
    if ("resource" in outcome) resources.push(outcome.resource);
    else {
      if (sourceOf && (known === undefined || outcome.policy.source === undefined)) outcome.policy.source = sourceOf(item);
      set.policies.push(outcome.policy);
    }
    set.good.push(item);
  });
  memo?.memo.end();
  set.resources = resourcesOf(resources);
  return set;
}

/** One item on its own: a Mesh, service or identity resource read into the engine's form, or a policy. */
function validateItem(item: Resource, kind: unknown, kumaVersion?: KumaVersion): ItemOutcome {
  if (kind === MESH_TYPE.kind || SERVICE_TYPES.some((t) => t.kind === kind) || isIdentityKind(kind)) {
    const { resource, violations } = readResource(item, kind as string);
    return resource ? { resource } : { violations };
  }
  const { policy, violations } = validatePolicyObject(item, kumaVersion);
  return policy ? { policy } : { violations };
}

/** The fresh set's resources followed by the last good versions kept for rejected ones, kind by kind. */
export function mergeResources(fresh: MeshResources, kept: MeshResources): MeshResources {
  return {
    meshes: [...fresh.meshes, ...kept.meshes],
    services: [...fresh.services, ...kept.services],
    identities: [...(fresh.identities ?? []), ...(kept.identities ?? [])],
    trusts: [...(fresh.trusts ?? []), ...(kept.trusts ?? [])],
  };
}

/** Deepest nesting accepted in one fetched item (the YAML bound's depth); deeper ones are rejected unread. */
export const MAX_ITEM_DEPTH = 64;

/**
 * An item nested deeper than any policy is rejected before anything walks it recursively (hashing, validation):
 * one such item must not fail the whole sync. The others, and the rejections (`isTooDeep` may answer from a memo).
 */
export function withoutTooDeepItems(all: Resource[], isTooDeep: (item: Resource) => boolean = (item) => nestsDeeperThan(item)): { items: Resource[]; rejected: RejectedItem[] } {
  const tooDeep = all.filter(isTooDeep);
  if (tooDeep.length === 0) return { items: all, rejected: [] };
  return {
    items: all.filter((item) => !tooDeep.includes(item)),
    rejected: tooDeep.map((item) => ({
      ...(typeof item.type === "string" ? { kind: item.type } : {}),
      ...(typeof item.name === "string" ? { name: item.name } : {}),
      violations: [{ field: "document", message: `nests deeper than ${MAX_ITEM_DEPTH} levels` }],
    })),
  };
}

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

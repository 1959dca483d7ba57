// Kuma's inspect endpoints over the store, answered with the policy engine itself:
// `GET /meshes/{mesh}/dataplanes/{name}/_rules` (the rules view of one Dataplane) and
// `GET /meshes/{mesh}/{policy-type}/{name}/_resources/dataplanes` (the Dataplanes a policy selects),
// in Kuma 2.14's JSON shape (`rulesForResource` / `matchingDataplanesForPolicy` in
// `pkg/api-server/resource_endpoints.go` @v2.14.3), including its 404 bodies.
import { DATAPLANE_TYPE, IDENTITY_TYPES, MESH_TYPE, POLICY_TYPES, type Resource, type ResourceType, SERVICE_TYPES } from "../kuma-rest/resources.js";
import { type MeshResources, resourceFromObject, resourcesOf } from "../policy/documents/resources.js";
import { inspectRules, metaOf } from "../policy/views/inspect-rules.js";
import { dataplanesForPolicy } from "../policy/views/inspect.js";
import { dataplaneFromObject, type Dataplane } from "../policy/documents/dataplane.js";
import { validatePolicyObject, type Policy } from "../policy/documents/parse.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";

import { pageBounds } from "./paging.js";
import { ApiError } from "./problems.js";
import type { ApiReply, ApiRequest, RouteContext } from "./route-context.js";

/** Kuma answers a missing mesh, dataplane or policy with this body ("Not found" as detail). */
const kumaNotFound = (title: string) => new ApiError(404, title, "Not found");

/** Every valid policy of the mesh, as the sidecar would load them (invalid stored files are skipped). */
export function meshPolicies(ctx: RouteContext, mesh: string): Policy[] {
  const out: Policy[] = [];
  for (const t of POLICY_TYPES) {
    for (const r of ctx.store.list(t.kind, mesh)) {
      const { policy } = validatePolicyObject(r, ctx.kumaVersion);
      if (policy) out.push(policy);
    }
  }
  return out;
}

/** The mesh's stored Mesh, service and identity resources, read as the engine reads them. */
export function meshResources(ctx: RouteContext, mesh: string): MeshResources {
  const raw = [ctx.store.getGlobal(MESH_TYPE.kind, mesh), ...[...SERVICE_TYPES, ...IDENTITY_TYPES].flatMap((t) => ctx.store.list(t.kind, mesh))];
  return resourcesOf(raw.flatMap((r) => (r ? (resourceFromObject(r).resource ?? []) : [])));
}

export function requireMesh(ctx: RouteContext, mesh: string): void {
  if (!ctx.store.meshes().includes(mesh)) throw kumaNotFound("Failed to retrieve Mesh");
}

export function engineDataplane(r: Resource, kumaVersion?: KumaVersion): Dataplane | undefined {
  return dataplaneFromObject(r, kumaVersion).dataplane;
}

export function dataplaneRules(ctx: RouteContext, mesh: string, name: string): ApiReply {
  requireMesh(ctx, mesh);
  const stored = ctx.store.get(DATAPLANE_TYPE.kind, mesh, name);
  if (!stored) throw kumaNotFound("Could not retrieve Dataplane");
  const dataplane = engineDataplane(stored, ctx.kumaVersion);
  if (!dataplane) throw new ApiError(400, "Could not process a resource", `Dataplane ${mesh}/${name} cannot be read by the policy engine`);
  return { status: 200, body: inspectRules(meshPolicies(ctx, mesh), dataplane, { kumaVersion: ctx.kumaVersion, resources: meshResources(ctx, mesh) }) };
}

export function policyDataplanes(ctx: RouteContext, req: ApiRequest, type: ResourceType, mesh: string, name: string): ApiReply {
  requireMesh(ctx, mesh);
  const { size, offset } = pageBounds(req.url);
  const stored = ctx.store.get(type.kind, mesh, name);
  if (!stored) throw kumaNotFound("Could not retrieve policy");
  const { policy, violations } = validatePolicyObject(stored, ctx.kumaVersion);
  if (!policy) throw new ApiError(400, "Could not process a resource", `stored ${type.kind} ${mesh}/${name} is not valid`, violations);
  const nameFilter = req.url.searchParams.get("name") ?? "";
  const dataplanes = ctx.store
    .list(DATAPLANE_TYPE.kind, mesh)
    .filter((r) => r.name.includes(nameFilter))
    .flatMap((r) => engineDataplane(r, ctx.kumaVersion) ?? []);
  const matching = dataplanesForPolicy(policy, dataplanes, { kumaVersion: ctx.kumaVersion, routes: meshPolicies(ctx, mesh) }).items;
  const items = matching.slice(offset, offset + size).map(metaOf);
  const body: { total: number; items: unknown[]; next?: string } = { total: matching.length, items };
  if (offset + size < matching.length) {
    const next = new URL(req.url.pathname + req.url.search, `http://${req.headers.host ?? "localhost"}`);
    next.searchParams.set("offset", String(offset + size));
    body.next = next.toString();
  }
  return { status: 200, body };
}

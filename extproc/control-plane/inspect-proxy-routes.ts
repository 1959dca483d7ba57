// Kuma 2.12+'s per-proxy inspect endpoints over the store (pkg/api-server/resource_endpoints.go at v2.14.3):
// `GET /meshes/{mesh}/dataplanes/{name}/_policies`, `…/_inbounds/{inbound-kri}/_policies` and
// `…/_outbounds/{kri}/_routes`, answered by the pure views in policy/views/inspect-policies.ts.
import { DATAPLANE_TYPE } from "../kuma-rest/resources.js";
import { dataplaneFromObject } from "../policy/documents/dataplane.js";
import { inboundPolicies, outboundRoutes, parseKri, proxyPolicies } from "../policy/views/inspect-policies.js";
import { meshPolicies, meshResources, requireMesh } from "./inspect-routes.js";
import { ApiError, badRequest } from "./problems.js";
import type { ApiReply, RouteContext } from "./route-context.js";

/** The reply for `rest` (the segments after `/meshes/{mesh}/dataplanes/{name}/`), or undefined when `rest` is not one of these endpoints. */
export function proxyInspect(ctx: RouteContext, mesh: string, name: string, rest: readonly string[]): (() => ApiReply) | undefined {
  const isPolicies = rest.length === 1 && rest[0] === "_policies";
  const isInbound = rest.length === 3 && rest[0] === "_inbounds" && rest[2] === "_policies";
  const isRoutes = rest.length === 3 && rest[0] === "_outbounds" && rest[2] === "_routes";
  if (!isPolicies && !isInbound && !isRoutes) return undefined;
  return () => {
    requireMesh(ctx, mesh);
    const stored = ctx.store.get(DATAPLANE_TYPE.kind, mesh, name);
    if (!stored) throw new ApiError(404, "Could not retrieve Dataplane", "Not found");
    const dataplane = dataplaneFromObject(stored).dataplane;
    if (!dataplane) throw new ApiError(400, "Could not process a resource", `Dataplane ${mesh}/${name} cannot be read by the policy engine`);
    if (isPolicies) return { status: 200, body: proxyPolicies() };
    const kri = parseKri(rest[1]!);
    if ("error" in kri) throw badRequest(`bad request: ${kri.error}`);
    const opts = { kumaVersion: ctx.kumaVersion, resources: meshResources(ctx, mesh) };
    if (isRoutes) return { status: 200, body: outboundRoutes(meshPolicies(ctx, mesh), dataplane, kri, opts) };
    const body = inboundPolicies(meshPolicies(ctx, mesh), dataplane, kri.sectionName, opts);
    if (!body) throw new ApiError(500, "Internal Server Error", "inbound not found");
    return { status: 200, body };
  };
}

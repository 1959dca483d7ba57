// Kuma 2.12+'s per-proxy inspect endpoints over the store (pkg/api-server/resource_endpoints.go at v2.14.3):
// `GET /meshes/{mesh}/dataplanes/{name}/_policies`, `…/_inbounds/{inbound-kri}/_policies`,
// `…/_outbounds/{kri}/_routes`, `…/_outbounds/{kri}/_policies` and `…/_outbounds/{kri}/_routes/{route-kri}/_policies`,
// answered by the pure views in policy/views/inspect-policies.ts and inspect-outbound-policies.ts.
import { DATAPLANE_TYPE, MESH_TYPE } from "../kuma-rest/resources.js";
import { inboundPolicies, outboundRoutes, parseKri, proxyPolicies, type Kri } from "../policy/views/inspect-policies.js";
import { outboundPolicies, routePolicies } from "../policy/views/inspect-outbound-policies.js";
import { engineDataplane, meshPolicies, meshResources, requireMesh } from "./inspect-routes.js";
import { ApiError, badRequest } from "./problems.js";
import type { ApiReply, RouteContext } from "./route-context.js";

/** The reply for `rest` (the segments after `/meshes/{mesh}/dataplanes/{name}/`), or undefined when `rest` is not one of these endpoints. */
export function proxyInspect(ctx: RouteContext, mesh: string, name: string, rest: readonly string[]): (() => ApiReply) | undefined {
  const isPolicies = rest.length === 1 && rest[0] === "_policies";
  const isInbound = rest.length === 3 && rest[0] === "_inbounds" && rest[2] === "_policies";
  const isRoutes = rest.length === 3 && rest[0] === "_outbounds" && rest[2] === "_routes";
  const isOutbound = rest.length === 3 && rest[0] === "_outbounds" && rest[2] === "_policies";
  const isRoute = rest.length === 5 && rest[0] === "_outbounds" && rest[2] === "_routes" && rest[4] === "_policies";
  if (!isPolicies && !isInbound && !isRoutes && !isOutbound && !isRoute) return undefined;
  return () => {
    requireMesh(ctx, mesh);
    const stored = ctx.store.get(DATAPLANE_TYPE.kind, mesh, name);
    if (!stored) throw new ApiError(404, "Could not retrieve Dataplane", "Not found");
    const dataplane = engineDataplane(stored, ctx.kumaVersion);
    if (!dataplane) throw new ApiError(400, "Could not process a resource", `Dataplane ${mesh}/${name} cannot be read by the policy engine`);
    // Kuma serves these views only for a mesh whose MeshServices are Exclusive (getPoliciesConf).
    const meshServices = (ctx.store.getGlobal(MESH_TYPE.kind, mesh) as { meshServices?: { mode?: string } } | undefined)?.meshServices;
    if (meshServices?.mode !== "Exclusive") throw badRequest("bad request: can't use _policies endpoint without meshService enabled");
    if (isPolicies) return { status: 200, body: proxyPolicies() };
    // Kuma reads the outbound (or inbound) KRI first, then the route's: the first malformed one is the 400.
    const kri = kriOrBadRequest(rest[1]!);
    if (isRoute) kriOrBadRequest(rest[3]!);
    const opts = { kumaVersion: ctx.kumaVersion, resources: meshResources(ctx, mesh) };
    if (isOutbound) return { status: 200, body: outboundPolicies(meshPolicies(ctx, mesh), dataplane, kri, opts) };
    if (isRoute) return { status: 200, body: routePolicies(meshPolicies(ctx, mesh), dataplane, opts) };
    if (isRoutes) return { status: 200, body: outboundRoutes(meshPolicies(ctx, mesh), dataplane, kri, opts) };
    const body = inboundPolicies(meshPolicies(ctx, mesh), dataplane, kri.sectionName, opts);
    if (!body) throw new ApiError(500, "Internal Server Error", "inbound not found");
    return { status: 200, body };
  };
}

/** kri.FromString's answer, or Kuma's 400 with its wording. */
function kriOrBadRequest(text: string): Kri {
  const kri = parseKri(text);
  if ("error" in kri) throw badRequest(`bad request: ${kri.error}`);
  return kri;
}

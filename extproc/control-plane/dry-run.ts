// `PUT …?dryRun=true`: the PUT's validation without storing anything, answered with what the write would do — the
// resource as it would be stored, whether it would be created, Kuma's deprecation warnings, and for a policy the
// Dataplanes it would select, in the shape of `GET …/{policy}/_resources/dataplanes` ({total, items}), and `whatIf`: per
// dataplane it (or the version it replaces) selects, the replay of the decision samples its sidecar pushed.
import { DATAPLANE_TYPE, POLICY_TYPES, type Resource, type ResourceType } from "../kuma-rest/resources.js";
import { validatePolicyObject } from "../policy/documents/parse.js";
import { metaOf } from "../policy/views/inspect-rules.js";
import { dataplanesForPolicy } from "../policy/views/inspect.js";
import { DEFAULT_WHAT_IF_EXAMPLES } from "../policy-tools/replay.js";
import { whatIfOnSamples } from "./dry-run-what-if.js";
import { engineDataplane, meshPolicies } from "./inspect-routes.js";
import { badRequest } from "./problems.js";
import type { ApiReply, ApiRequest, RouteContext } from "./route-context.js";

/** True when the request asks for a dry run (`?dryRun=true`, or `?dryRun` alone). */
export function isDryRun(req: Pick<ApiRequest, "url">): boolean {
  const v = req.url.searchParams.get("dryRun");
  return v === "" || v === "true";
}

/** The answer to a valid PUT of `resource` that is not stored. */
export function dryRunReply(ctx: RouteContext, req: Pick<ApiRequest, "url">, type: ResourceType, resource: Resource): ApiReply {
  const exists = ctx.store.get(type.kind, resource.mesh, resource.name) !== undefined;
  const body: Record<string, unknown> = { dryRun: true, created: !exists, resource };
  if (POLICY_TYPES.includes(type)) {
    const { policy } = validatePolicyObject(resource, ctx.kumaVersion);
    body.warnings = (policy?.warnings ?? []).map((w) => `${w.field}: ${w.message}`);
    if (policy) {
      // The candidate replaces any stored policy of the same name: a MeshHTTPRoute targetRef resolves against the set with it.
      const storedPolicies = meshPolicies(ctx, resource.mesh);
      const stored = storedPolicies.find((p) => p.type === policy.type && p.name === policy.name);
      const routes = [...storedPolicies.filter((p) => p !== stored), policy];
      const dataplanes = ctx.store.list(DATAPLANE_TYPE.kind, resource.mesh).flatMap((r) => engineDataplane(r, ctx.kumaVersion) ?? []);
      const matching = dataplanesForPolicy(policy, dataplanes, { kumaVersion: ctx.kumaVersion, routes });
      body.dataplanes = { total: matching.total, items: matching.items.map(metaOf) };
      const examples = examplesOf(req);
      body.whatIf = { dataplanes: whatIfOnSamples(ctx, { mesh: resource.mesh, candidate: policy, ...(stored ? { stored } : {}), policies: routes, storedPolicies, dataplanes, examples }) };
    }
  }
  return { status: 200, body };
}

/** `?examples=N`: how many changed decisions each dataplane's what-if shows in full. */
function examplesOf(req: Pick<ApiRequest, "url">): number {
  const raw = req.url.searchParams.get("examples");
  if (raw === null) return DEFAULT_WHAT_IF_EXAMPLES;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > MAX_EXAMPLES) throw badRequest("invalid query", [{ field: "examples", message: `must be an integer from 0 to ${MAX_EXAMPLES}` }]);
  return n;
}

const MAX_EXAMPLES = 1000;

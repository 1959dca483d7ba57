// `GET /meshes/{mesh}/dataplanes/{name}/_policy-set`: one registered Dataplane's own policy set (policy-sets.ts),
// with its ETag and the same `If-None-Match` + `?wait=` long-poll as the lists, woken only when that set changes.
// Not a Kuma endpoint: the sidecar finds it in `GET /` (`features`) and otherwise reads the full lists. A sidecar
// holding the set a change replaced may ask for only what changed (DELTA_REQUEST_HEADER in kuma-rest/features.ts).
import { ApiError } from "./problems.js";
import { header } from "./paging.js";
import { policySetKey } from "./policy-sets.js";
import type { ApiReply, ApiRequest, RouteContext } from "./route-context.js";
import { etagsOf, parseWaitMs, renderWhenChanged } from "./watch.js";
import { DELTA_BASE_HEADER, DELTA_REQUEST_HEADER } from "../kuma-rest/features.js";

export async function dataplanePolicySet(ctx: RouteContext, req: ApiRequest, mesh: string, name: string): Promise<ApiReply> {
  const waitMs = parseWaitMs(req.url.searchParams.get("wait"));
  if (!ctx.store.meshes().includes(mesh)) throw new ApiError(404, "Failed to retrieve Mesh", "Not found");
  const render = () => {
    const set = ctx.policySets.view(mesh, name);
    if (!set) throw new ApiError(404, "Could not retrieve Dataplane", "Not found");
    return set;
  };
  const key = policySetKey(mesh, name);
  const ifNoneMatch = header(req, "if-none-match");
  const { view, notModified } = await renderWhenChanged(key, render, ifNoneMatch, waitMs, ctx.notifier, req.abandoned);
  if (notModified) return { status: 304, headers: { etag: view.etag } };
  // A sidecar that holds the set this one replaced (its one ETag, exactly) may take only what changed.
  const held = etagsOf(ifNoneMatch);
  if (view.previous && view.delta && header(req, DELTA_REQUEST_HEADER) !== undefined && held.length === 1 && held[0] === view.previous.etag) {
    return { status: 200, headers: { etag: view.etag, [DELTA_BASE_HEADER]: view.previous.etag }, bytes: view.delta() };
  }
  return { status: 200, headers: { etag: view.etag }, bytes: view.bytes };
}

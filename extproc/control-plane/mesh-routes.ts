// Kuma's Mesh resource over the store: `GET /meshes` lists stored Meshes plus the meshes that only hold
// resources (and `default`), `GET /meshes/{name}` reads one, PUT/DELETE store a Mesh (with its mTLS state)
// through the global-resource routes.
import { type GlobalResource, MESH_TYPE } from "../kuma-rest/resources.js";
import { routeGlobal } from "./global-routes.js";
import { listReply } from "./paging.js";
import { notFound } from "./problems.js";
import type { ApiReply, ApiRequest, RouteContext } from "./route-context.js";
import type { ResourceStore } from "./store.js";
import type { ChangeNotifier } from "./watch.js";

/** Serves /meshes (name undefined) and /meshes/{name}. */
export async function routeMeshes(ctx: RouteContext, req: ApiRequest, name: string | undefined): Promise<ApiReply> {
  if (req.method !== "GET") return routeGlobal(ctx, req, MESH_TYPE, name);
  if (name === undefined) return listReply(req, ctx.notifier, { kind: MESH_TYPE.kind }, () => ctx.store.meshes().map((m) => meshView(ctx, m)));
  if (!ctx.store.meshes().includes(name)) throw notFound(`mesh ${name} not found`);
  return { status: 200, body: meshView(ctx, name) };
}

/** The stored Mesh, or a bare `{type: Mesh, name}` for a mesh that exists only through its resources. */
export function meshView(ctx: RouteContext, name: string): GlobalResource {
  return ctx.store.getGlobal(MESH_TYPE.kind, name) ?? { type: MESH_TYPE.kind, name };
}

/**
 * `GET /meshes` also lists the meshes that exist only through their resources: the first resource of a new mesh,
 * or the removal of the last one, changes that list without a write of a Mesh, so it is bumped (and its long-polls
 * woken) then too.
 */
export function watchImplicitMeshes(store: ResourceStore, notifier: ChangeNotifier): void {
  let known = store.meshes();
  store.on("change", (change) => {
    if (change.mesh === undefined && change.kind !== MESH_TYPE.kind) return;
    if (change.op === "put" && known.includes(change.mesh ?? change.name)) return;
    const now = store.meshes();
    if (now.join("/") === known.join("/")) return;
    known = now;
    // A Mesh's own write already bumped the list.
    if (change.mesh !== undefined) notifier.notify(MESH_TYPE.kind);
  });
}

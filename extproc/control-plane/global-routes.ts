// Kuma's REST shape for global (non-mesh) resources such as ContainerPatch: list at /{plural}, and GET, PUT
// (validated like the clients validate) and DELETE at /{plural}/{name}.
import type { GlobalResource, ResourceType } from "../kuma-rest/resources.js";
import { badRequest, invalidResource, methodNotAllowed, notFound } from "./problems.js";
import { listReply } from "./paging.js";
import type { ApiReply, ApiRequest, RouteContext } from "./route-context.js";
import { decodeUtf8, parseYamlSafe } from "./safety.js";
import { meshNameViolations, nameViolations, validateGlobalResource } from "./validate.js";

/** Serves /{type.plural} (name undefined) and /{type.plural}/{name}. */
export async function routeGlobal(ctx: RouteContext, req: ApiRequest, type: ResourceType, name: string | undefined): Promise<ApiReply> {
  const allowed = name === undefined ? ["GET"] : ["GET", "PUT", "DELETE"];
  if (!allowed.includes(req.method)) throw methodNotAllowed(req.method, req.url.pathname, allowed);
  if (name === undefined) return listReply(req, ctx.notifier, { kind: type.kind }, () => ctx.store.listGlobal(type.kind));
  if (req.method === "PUT") return put(ctx, req, type, name);
  if (req.method === "DELETE") return remove(ctx, type, name);
  const found = ctx.store.getGlobal(type.kind, name);
  if (!found) throw notFound(`${type.kind} ${name} not found`);
  return { status: 200, body: found };
}

async function put(ctx: RouteContext, req: ApiRequest, type: ResourceType, name: string): Promise<ApiReply> {
  const pathViolations = type.kind === "Mesh" ? meshNameViolations("name", name) : nameViolations("name", name);
  if (pathViolations.length) throw badRequest("invalid name in the URL", pathViolations);
  const doc = parseYamlSafe(decodeUtf8(await req.body()), ctx.limits);
  const violations = validateGlobalResource(type, name, doc);
  if (violations.length) throw invalidResource(violations);
  // Server-owned metadata in a PUT body is ignored (Kuma does the same).
  const { creationTime: _c, modificationTime: _m, ...rest } = doc as Record<string, unknown>;
  const { created, resource } = await ctx.store.putGlobal(type, { ...rest, type: type.kind, name } as GlobalResource);
  return { status: created ? 201 : 200, body: resource };
}

async function remove(ctx: RouteContext, type: ResourceType, name: string): Promise<ApiReply> {
  if (!(await ctx.store.deleteGlobal(type, name))) throw notFound(`${type.kind} ${name} not found`);
  return { status: 200, body: {} };
}

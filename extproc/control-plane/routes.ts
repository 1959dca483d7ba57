// The Kuma REST shape over the store: list (paged, filtered, ETag + long-poll), get, PUT, DELETE for the
// policy kinds, service resources and Dataplanes, across meshes and per mesh, plus the dataplane heartbeat,
// the API root and /_resources; Meshes go to mesh-routes.ts, other global types (ContainerPatch) to
// global-routes.ts, the inspect endpoints to inspect-routes.ts.
import { timingSafeEqual } from "node:crypto";
import { hostname } from "node:os";
import { referenceRelease } from "../kuma-rest/kuma-version.js";
import { ALL_TYPES, DATAPLANE_TYPE, GLOBAL_TYPES, globalTypeByPlural, POLICY_TYPES, type Resource, type ResourceType, typeByPlural } from "../kuma-rest/resources.js";
import { postDecisionSamples } from "./decision-sample-routes.js";
import { dryRunReply, isDryRun } from "./dry-run.js";
import { dataplaneRules, policyDataplanes } from "./inspect-routes.js";
import { proxyInspect } from "./inspect-proxy-routes.js";
import { dataplanePolicySet } from "./policy-set-routes.js";
import { POLICY_SET_FEATURE } from "../kuma-rest/features.js";
import { validatePolicyObject } from "../policy/documents/parse.js";
import { routeGlobal } from "./global-routes.js";
import { ApiError, badRequest, invalidResource, methodNotAllowed, notFound, unauthorized } from "./problems.js";
import { parseYamlSafe, decodeUtf8 } from "./safety.js";
import { listReply } from "./paging.js";
import { routeMeshes } from "./mesh-routes.js";
import { meshNameViolations, nameViolations, validateResource } from "./validate.js";
import type { ApiReply, ApiRequest, RouteContext } from "./route-context.js";

export type { ApiReply, ApiRequest, RouteContext };

const WRITE_METHODS = new Set(["PUT", "DELETE", "POST"]);

export async function route(ctx: RouteContext, req: ApiRequest): Promise<ApiReply> {
  const path = req.url.pathname.replace(/\/+$/, "");
  const seg = path.split("/").filter(Boolean).map(decodeSegment);
  if (WRITE_METHODS.has(req.method)) requireToken(ctx.token, req.headers.authorization);

  if (seg.length === 0) return only(req, ["GET"], () => ({ status: 200, body: index(ctx) }));
  if (seg.length === 1 && seg[0] === "_resources") return only(req, ["GET"], () => ({ status: 200, body: resourceTypes() }));
  if (seg[0] === "meshes" && seg.length <= 2) return routeMeshes(ctx, req, seg[1]);
  const global = seg.length <= 2 ? globalTypeByPlural(seg[0]!) : undefined;
  if (global) return routeGlobal(ctx, req, global, seg[1]);
  if (seg.length === 1) {
    const type = typeByPlural(seg[0]!);
    if (type) return only(req, ["GET"], () => list(ctx, req, type, undefined));
  }
  if (seg[0] === "meshes" && seg.length >= 3) {
    const mesh = seg[1]!;
    const type = typeByPlural(seg[2]!);
    const global = globalTypeByPlural(seg[2]!);
    if (global) throw notFound(`${global.kind} is global, outside any mesh: use /${global.plural}`);
    if (!type) throw notFound(`no resource type at ${path}`);
    if (seg.length === 3) return only(req, ["GET"], () => list(ctx, req, type, mesh));
    const name = seg[3]!;
    if (seg.length === 4) {
      return only(req, ["GET", "PUT", "DELETE"], () =>
        req.method === "GET" ? getOne(ctx, type, mesh, name) : req.method === "PUT" ? put(ctx, req, type, mesh, name) : remove(ctx, type, mesh, name),
      );
    }
    if (seg.length === 5 && type === DATAPLANE_TYPE && seg[4] === "_heartbeat") return only(req, ["POST"], () => heartbeat(ctx, req, mesh, name));
    if (seg.length === 5 && type === DATAPLANE_TYPE && seg[4] === "_decision-samples") return only(req, ["POST"], () => postDecisionSamples(ctx, req, mesh, name));
    if (seg.length === 5 && type === DATAPLANE_TYPE && seg[4] === "_rules") return only(req, ["GET"], () => dataplaneRules(ctx, mesh, name));
    if (seg.length === 5 && type === DATAPLANE_TYPE && seg[4] === "_policy-set") return only(req, ["GET"], () => dataplanePolicySet(ctx, req, mesh, name));
    const proxyView = type === DATAPLANE_TYPE ? proxyInspect(ctx, mesh, name, seg.slice(4)) : undefined;
    if (proxyView) return only(req, ["GET"], proxyView);
    if (seg.length === 6 && POLICY_TYPES.includes(type) && seg[4] === "_resources" && seg[5] === "dataplanes") {
      return only(req, ["GET"], () => policyDataplanes(ctx, req, type, mesh, name));
    }
  }
  throw notFound(`no such endpoint: ${path}`);
}

/** One path segment, percent-decoded; malformed encoding (`%zz`, a cut UTF-8 sequence) is the client's error. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`malformed percent-encoding in the path segment ${JSON.stringify(segment)}`);
  }
}

async function only(req: ApiRequest, methods: string[], handle: () => ApiReply | Promise<ApiReply>): Promise<ApiReply> {
  if (!methods.includes(req.method)) throw methodNotAllowed(req.method, req.url.pathname, methods);
  return handle();
}

function requireToken(token: string, header: string | string[] | undefined): void {
  if (!token) return;
  const given = typeof header === "string" && header.startsWith("Bearer ") ? Buffer.from(header.slice(7).trim()) : Buffer.alloc(0);
  const want = Buffer.from(token);
  if (given.length !== want.length || !timingSafeEqual(given, want)) throw unauthorized();
}

/**
 * Kuma's Index (`GET /`): `version` is meshext's own, `basedOnKuma` the Kuma release whose semantics it
 * emulates — what a sidecar's version detection reads, as for any Kuma distribution.
 */
function index(ctx: RouteContext) {
  return {
    hostname: hostname(),
    product: "meshext",
    version: ctx.version,
    basedOnKuma: referenceRelease(ctx.kumaVersion),
    instanceId: `meshext-${hostname()}`,
    clusterId: "",
    gui: "",
    tagline: "meshext embedded control plane",
    // Not in Kuma's Index: what this control plane serves beyond Kuma's API (a sidecar uses it when listed).
    features: [POLICY_SET_FEATURE],
  };
}

/** Kuma's `GET /_resources` (pkg/api-server/mappers/resource_type_description.go @v2.14.3), sorted by name. */
function resourceTypes() {
  const describe = (t: ResourceType, scope: "Mesh" | "Global") => {
    const { policy, ...d } = t.describe!;
    return { name: t.kind, scope, readOnly: false, path: t.plural, ...d, ...(policy ? { policy } : {}) };
  };
  const resources = [...ALL_TYPES.map((t) => describe(t, "Mesh")), ...GLOBAL_TYPES.map((t) => describe(t, "Global"))];
  return { resources: resources.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
}

function viewOf(ctx: RouteContext, type: ResourceType, r: Resource): Resource {
  return type === DATAPLANE_TYPE ? ctx.dataplanes.view(r) : r;
}

function list(ctx: RouteContext, req: ApiRequest, type: ResourceType, mesh: string | undefined): Promise<ApiReply> {
  const view = type === DATAPLANE_TYPE ? (r: Resource) => ctx.dataplanes.view(r) : undefined;
  return listReply(req, ctx.notifier, { kind: type.kind, mesh: mesh ?? "*" }, () => ctx.store.list(type.kind, mesh), view);
}

function getOne(ctx: RouteContext, type: ResourceType, mesh: string, name: string): ApiReply {
  const found = ctx.store.get(type.kind, mesh, name);
  if (!found) throw notFound(`${type.kind} ${mesh}/${name} not found`);
  return { status: 200, body: viewOf(ctx, type, found) };
}

async function put(ctx: RouteContext, req: ApiRequest, type: ResourceType, mesh: string, name: string): Promise<ApiReply> {
  const pathViolations = [...meshNameViolations("mesh", mesh), ...nameViolations("name", name)];
  if (pathViolations.length) throw badRequest("invalid mesh or name in the URL", pathViolations);
  const doc = parseYamlSafe(decodeUtf8(await req.body()), ctx.limits);
  const violations = validateResource(type, mesh, name, doc, ctx.kumaVersion);
  if (violations.length) throw invalidResource(violations);
  const resource = { ...(doc as Record<string, unknown>), type: type.kind, mesh, name } as Resource;
  if (isDryRun(req)) return dryRunReply(ctx, req, type, stripServerFields(resource));
  const { created, resource: stored } =
    type === DATAPLANE_TYPE ? await ctx.dataplanes.register(mesh, name, resource) : await ctx.store.put(type, stripServerFields(resource));
  const warnings = POLICY_TYPES.includes(type) ? (validatePolicyObject(resource, ctx.kumaVersion).policy?.warnings ?? []) : [];
  // Kuma's PUT answers {warnings: [...]} (deprecations); ours is the stored resource, with the warnings beside it.
  return { status: created ? 201 : 200, body: warnings.length ? { ...stored, warnings: warnings.map((w) => `${w.field}: ${w.message}`) } : stored };
}

/** Server-owned metadata in a PUT body is ignored (Kuma does the same). */
function stripServerFields(r: Resource): Resource {
  const { creationTime: _c, modificationTime: _m, ...rest } = r;
  return rest as Resource;
}

async function remove(ctx: RouteContext, type: ResourceType, mesh: string, name: string): Promise<ApiReply> {
  const existed = type === DATAPLANE_TYPE ? await ctx.dataplanes.deregister(mesh, name) : await ctx.store.delete(type, mesh, name);
  if (!existed) throw notFound(`${type.kind} ${mesh}/${name} not found`);
  return { status: 200, body: {} };
}

async function heartbeat(ctx: RouteContext, req: ApiRequest, mesh: string, name: string): Promise<ApiReply> {
  const raw = await req.body();
  const doc = raw.length ? parseYamlSafe(decodeUtf8(raw), ctx.limits) : {};
  const state = (doc as { state?: unknown } | null)?.state;
  if (state !== undefined && state !== "online" && state !== "draining") {
    throw badRequest("invalid heartbeat", [{ field: "state", message: "must be online or draining" }]);
  }
  return { status: 200, body: await ctx.dataplanes.heartbeat(mesh, name, state) };
}

export { ApiError };

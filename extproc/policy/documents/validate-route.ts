// Validates MeshHTTPRoute `to[].rules` (matches and filters): meshhttproute/api/v1alpha1/validation.go at v2.14.3.
import { at, Issues, isObj, type Obj } from "./issues.js";
import type { VersionTraits } from "../model/kuma-version.js";
import { refuseControlCharacters, validateHeaderList } from "./validate-confs.js";
import { DNS1123_SUBDOMAIN, RFC1123_MESSAGE } from "./validate-rules.js";
import { validateTargetRef } from "./validate-target-ref.js";

export interface RouteRulesContext {
  /** The route's top-level targetRef is a MeshGateway. */
  gatewayTop: boolean;
  traits: VersionTraits;
}

const PATH_TYPES = ["Exact", "PathPrefix", "RegularExpression"] as const;
const METHODS = ["CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"] as const;
const HEADER_MATCH_TYPES = ["Exact", "Present", "RegularExpression", "Absent", "Prefix"] as const;
const QUERY_MATCH_TYPES = ["Exact", "RegularExpression"] as const;
const FILTER_TYPES = ["RequestHeaderModifier", "ResponseHeaderModifier", "RequestRedirect", "URLRewrite", "RequestMirror"] as const;

export function validateRouteRules(v: unknown, path: string, ctx: RouteRulesContext, issues: Issues): void {
  const rules = issues.arr(v, path, true, 1);
  rules?.forEach((raw, i) => {
    const rp = at(path, i);
    const rule = issues.obj(raw, rp);
    if (!rule) return;
    const matches = issues.arr(rule.matches, at(rp, "matches"), true, 1);
    matches?.forEach((m, j) => validateMatch(m, at(at(rp, "matches"), j), issues));
    const conf = issues.obj(rule.default, at(rp, "default"));
    if (!conf) return;
    const filters = issues.arr(conf.filters, at(at(rp, "default"), "filters"), false);
    const allPrefix = (matches ?? []).every((m) => isObj(m) && isObj(m.path) && m.path.type === "PathPrefix");
    filters?.forEach((f, j) => validateFilter(f, at(at(at(rp, "default"), "filters"), j), { ...ctx, allPrefix }, issues));
    const refsPath = at(at(rp, "default"), "backendRefs");
    const refs = issues.arr(conf.backendRefs, refsPath, false);
    refs?.forEach((r, j) => validateBackendRef(r, at(refsPath, j), ctx.traits, issues));
    if (refs && refs.length > 0) issues.warn(refsPath, NOT_APPLIED_BACKEND_REFS);
  });
}

function validateMatch(v: unknown, path: string, issues: Issues): void {
  const m = issues.obj(v, path);
  if (!m) return;
  const p = issues.obj(m.path, at(path, "path"), false);
  if (p) {
    const type = issues.oneOf(p.type, at(at(path, "path"), "type"), PATH_TYPES);
    const value = issues.str(p.value, at(at(path, "path"), "value"));
    if (type && value !== undefined) validatePathValue(type, value, at(at(path, "path"), "value"), issues);
  }
  issues.oneOf(m.method, at(path, "method"), METHODS, false);
  issues.arr(m.headers, at(path, "headers"), false)?.forEach((raw, i) => {
    const hp = at(at(path, "headers"), i);
    const h = issues.obj(raw, hp);
    if (!h) return;
    const type = issues.oneOf(h.type ?? "Exact", at(hp, "type"), HEADER_MATCH_TYPES);
    const name = issues.str(h.name, at(hp, "name"));
    if (name && name !== name.toLowerCase()) issues.add(at(hp, "name"), "must be lower case");
    if (type !== "Present" && type !== "Absent") {
      const value = issues.str(h.value, at(hp, "value"), false);
      if (value === undefined) issues.add(at(hp, "value"), `must be defined for type ${type}`);
      else if (type === "RegularExpression") validateRegex(value, at(hp, "value"), issues);
    }
  });
  issues.arr(m.queryParams, at(path, "queryParams"), false)?.forEach((raw, i) => {
    const qp = at(at(path, "queryParams"), i);
    const q = issues.obj(raw, qp);
    if (!q) return;
    const type = issues.oneOf(q.type, at(qp, "type"), QUERY_MATCH_TYPES);
    issues.str(q.name, at(qp, "name"));
    const value = issues.str(q.value, at(qp, "value"));
    if (type === "RegularExpression" && value !== undefined) validateRegex(value, at(qp, "value"), issues);
  });
}

function validatePathValue(type: (typeof PATH_TYPES)[number], value: string, path: string, issues: Issues): void {
  if (type === "RegularExpression") {
    validateRegex(value, path, issues);
    return;
  }
  if (!value.startsWith("/")) issues.add(path, "must be an absolute path");
  else if (type === "PathPrefix" && value.length > 1 && value.endsWith("/")) issues.add(path, "does not need a trailing slash because only a `/`-separated prefix or an entire path is matched");
}

function validateRegex(value: string, path: string, issues: Issues): void {
  try {
    new RegExp(value);
  } catch {
    issues.add(path, "must be a valid regular expression");
  }
}

function validateFilter(v: unknown, path: string, ctx: RouteRulesContext & { allPrefix: boolean }, issues: Issues): void {
  const f = issues.obj(v, path);
  if (!f) return;
  const type = issues.oneOf(f.type, at(path, "type"), FILTER_TYPES);
  if (!type) return;
  const key = type[0]!.toLowerCase() + type.slice(1);
  const field = type === "URLRewrite" ? "urlRewrite" : key;
  const body = issues.obj(f[field], at(path, field));
  if (!body) return;
  const fp = at(path, field);
  if (type === "RequestHeaderModifier" || type === "ResponseHeaderModifier") validateHeaderModifier(body, fp, issues);
  else if (type === "RequestRedirect" || type === "URLRewrite") validateRewrite(type, body, fp, ctx, issues);
  else if (type === "RequestMirror") {
    // Kuma 3.0 mirrors to the real service kinds only (meshhttproute validation.go on Kuma's master branch).
    const kinds = ctx.traits.labelsOnlyRefs ? BACKEND_KINDS_30 : (["MeshService", "MeshServiceSubset"] as const);
    validateTargetRef(body.backendRef, at(fp, "backendRef"), { kinds, traits: ctx.traits }, issues);
    issues.warn(fp, "not applied by meshext: ext_proc cannot mirror requests (Envoy's router does)");
  }
}

const BACKEND_KINDS_30 = ["MeshService", "MeshExternalService", "MeshMultiZoneService"] as const;

const NOT_APPLIED_BACKEND_REFS = "not applied by meshext: ext_proc cannot choose the upstream cluster, so weights and backends are Envoy's route config's";

const REDIRECT_CODES = [301, 302, 303, 307, 308];

/**
 * A BackendRef: a targetRef (ValidateTargetRef: a MeshServiceSubset needs `name`) of a MeshService(Subset) or, as the
 * version allows, a real service kind; `port` (2.7+, required with MeshMultiZoneService: ValidateBackendRef in
 * pkg/core/validators/common_validators.go at v2.14.3), `weight`.
 */
function validateBackendRef(v: unknown, path: string, traits: VersionTraits, issues: Issues): void {
  const ref = issues.obj(v, path);
  if (!ref) return;
  const kinds = ["MeshService", "MeshServiceSubset", ...(["MeshExternalService", "MeshMultiZoneService"] as const).filter((k) => traits.realServiceKinds.has(k))] as const;
  const checked = validateTargetRef(ref, path, { kinds, traits }, issues);
  if (ref.port !== undefined) {
    if (traits.realServiceKinds.size === 0) issues.add(at(path, "port"), `must not be set (BackendRef port is new in Kuma 2.7)`);
    else issues.int(ref.port, at(path, "port"), 1, 65535);
  } else if (checked?.kind === "MeshMultiZoneService") issues.add(at(path, "port"), "must be defined with kind MeshMultiZoneService");
  issues.int(ref.weight, at(path, "weight"), 0, Number.MAX_SAFE_INTEGER, false);
}

/** RequestRedirect and URLRewrite (validateFilters in meshhttproute/api/v1alpha1/validation.go at v2.14.3). */
function validateRewrite(type: "RequestRedirect" | "URLRewrite", body: Obj, fp: string, ctx: RouteRulesContext & { allPrefix: boolean }, issues: Issues): void {
  const hostname = issues.str(body.hostname, at(fp, "hostname"), false);
  if (hostname !== undefined) {
    if (/^[0-9.]+$/.test(hostname) || hostname.includes(":")) issues.add(at(fp, "hostname"), "cannot be an IP address");
    else if (!DNS1123_SUBDOMAIN.test(hostname) || hostname.length > 253) issues.add(at(fp, "hostname"), RFC1123_MESSAGE);
  }
  const pathMod = issues.obj(body.path, at(fp, "path"), false);
  if (pathMod) {
    const pp = at(fp, "path");
    const t = issues.oneOf(pathMod.type, at(pp, "type"), ["ReplaceFullPath", "ReplacePrefixMatch"] as const);
    if (t === "ReplaceFullPath") {
      const full = issues.str(pathMod.replaceFullPath, at(pp, "replaceFullPath"));
      if (full !== undefined) refuseControlCharacters(full, at(pp, "replaceFullPath"), issues);
    }
    if (t === "ReplacePrefixMatch") {
      const prefix = issues.str(pathMod.replacePrefixMatch, at(pp, "replacePrefixMatch"));
      if (prefix !== undefined) refuseControlCharacters(prefix, at(pp, "replacePrefixMatch"), issues);
    }
    if (pathMod.replacePrefixMatch !== undefined && !ctx.allPrefix) issues.add(at(pp, "replacePrefixMatch"), "can only appear if all matches match a path prefix");
  }
  if (type === "RequestRedirect") {
    issues.oneOf(body.scheme, at(fp, "scheme"), ["http", "https"] as const, false);
    issues.int(body.port, at(fp, "port"), 1, 65535, false);
    const code = issues.int(body.statusCode, at(fp, "statusCode"), 300, 399, false);
    if (code !== undefined && !REDIRECT_CODES.includes(code)) issues.add(at(fp, "statusCode"), "must be one of 301, 302, 303, 307, 308");
    return;
  }
  if (body.hostToBackendHostname === true) {
    issues.warn(at(fp, "hostToBackendHostname"), "not applied by meshext: the backend hostname is only known once Envoy picked the upstream");
    if (!ctx.gatewayTop) issues.add(at(fp, "hostToBackendHostname"), "can only be set with MeshGateway");
    if (hostname !== undefined) issues.add(at(fp, "hostToBackendHostname"), "cannot be set together with hostname");
  }
}

function validateHeaderModifier(m: Record<string, unknown>, path: string, issues: Issues): void {
  if (m.set === undefined && m.add === undefined && m.remove === undefined) {
    issues.add(path, "must have at least one defined: set, add, remove");
  }
  const seen = new Set<string>();
  const note = (name: unknown, field: string): void => {
    if (typeof name !== "string") return;
    const lower = name.toLowerCase();
    if (seen.has(lower)) issues.add(field, `duplicate header name ${name} across set, add and remove`);
    seen.add(lower);
  };
  validateHeaderList(m.set, at(path, "set"), issues).forEach((h, i) => note(h?.name, at(at(path, "set"), i)));
  validateHeaderList(m.add, at(path, "add"), issues).forEach((h, i) => note(h?.name, at(at(path, "add"), i)));
  const remove = issues.arr(m.remove, at(path, "remove"), false);
  if (remove && remove.length > 16) issues.add(at(path, "remove"), "must have at most 16 elements");
  remove?.forEach((n, i) => {
    if (issues.str(n, at(at(path, "remove"), i)) !== undefined) note(n, at(at(path, "remove"), i));
  });
}

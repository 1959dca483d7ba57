// MeshHTTPRoute filters applied by ext_proc (what meshhttproute's xds/filters/*.go at v2.14.3 configures):
// header modifiers (values split on commas up to Kuma 2.7, literal from 2.8), URLRewrite (path full/prefix
// replace, hostname → :authority) and RequestRedirect (a local 3xx with `location`). RequestMirror, weighted
// backendRefs and hostToBackendHostname need Envoy's router and are reported as not applied.
import type { HeaderEdits } from "../../decision.js";
import { splitValues } from "../plans/routes.js";
import type { HeaderModifier, RouteFilter, RouteMatch } from "../model/types.js";

export interface FilterRequest {
  scheme: string;
  authority: string;
  /** `:path` with the query string. */
  path: string;
}

export interface FilterResult {
  request?: HeaderEdits;
  response?: HeaderEdits;
  redirect?: { status: number; location: string };
  /** A rewrite changed :path or :authority: Envoy must pick the route again. */
  clearRouteCache: boolean;
  /** What ext_proc cannot do, e.g. "RequestMirror", "backendRefs". */
  notApplied: string[];
}

interface PathModifier {
  type?: "ReplaceFullPath" | "ReplacePrefixMatch";
  replaceFullPath?: string;
  replacePrefixMatch?: string;
}

interface Rewrite {
  hostname?: string;
  path?: PathModifier;
  hostToBackendHostname?: boolean;
}

interface Redirect extends Rewrite {
  scheme?: string;
  port?: number;
  statusCode?: number;
}

export function applyFilters(filters: readonly RouteFilter[] | undefined, backendRefs: readonly unknown[] | undefined, match: RouteMatch, req: FilterRequest, splitHeaderValues: boolean): FilterResult {
  const out: FilterResult = { clearRouteCache: false, notApplied: [] };
  for (const f of filters ?? []) {
    if (f.type === "RequestHeaderModifier" && f.requestHeaderModifier) out.request = modify(out.request, f.requestHeaderModifier, splitHeaderValues);
    else if (f.type === "ResponseHeaderModifier" && f.responseHeaderModifier) out.response = modify(out.response, f.responseHeaderModifier, splitHeaderValues);
    else if (f.type === "URLRewrite" && f.urlRewrite) rewrite(out, f.urlRewrite as Rewrite, match, req);
    else if (f.type === "RequestRedirect" && f.requestRedirect) out.redirect = redirect(f.requestRedirect as Redirect, match, req);
    else out.notApplied.push(f.type);
  }
  if ((backendRefs?.length ?? 0) > 0) out.notApplied.push("backendRefs");
  return out;
}

function modify(edits: HeaderEdits | undefined, mod: HeaderModifier, split: boolean): HeaderEdits {
  const out: HeaderEdits = edits ?? { set: [], add: [], remove: [] };
  const values = (v: string): string[] => (split ? splitValues(v) : [v]);
  for (const { name, value } of mod.set ?? []) {
    const [first = "", ...rest] = values(value);
    out.set.push([name.toLowerCase(), first]);
    for (const v of rest) out.add.push([name.toLowerCase(), v]);
  }
  for (const { name, value } of mod.add ?? []) for (const v of values(value)) out.add.push([name.toLowerCase(), v]);
  for (const name of mod.remove ?? []) out.remove.push(name.toLowerCase());
  return out;
}

function rewrite(out: FilterResult, r: Rewrite, match: RouteMatch, req: FilterRequest): void {
  const edits = (out.request ??= { set: [], add: [], remove: [] });
  if (r.hostname !== undefined) {
    edits.set.push([":authority", r.hostname]);
    out.clearRouteCache = true;
  }
  if (r.hostToBackendHostname) out.notApplied.push("URLRewrite.hostToBackendHostname");
  const path = newPath(r.path, match, req.path);
  if (path !== undefined) {
    edits.set.push([":path", path]);
    out.clearRouteCache = true;
  }
}

function redirect(r: Redirect, match: RouteMatch, req: FilterRequest): { status: number; location: string } {
  const scheme = r.scheme ?? req.scheme;
  const host = authorityHost(req.authority);
  const authority = r.port !== undefined ? `${r.hostname ?? host}:${r.port}` : r.hostname !== undefined ? r.hostname : req.authority;
  return { status: r.statusCode ?? 302, location: `${scheme}://${authority}${newPath(r.path, match, req.path) ?? req.path}` };
}

/**
 * The rewritten `:path` (query kept), or undefined when there is no path modifier. ReplacePrefixMatch as Kuma
 * configures Envoy for a `PathPrefix P` match: exact P becomes the replacement, `P/rest` becomes
 * replacement + `rest` (so `/v1/a` with `/v2` is `/v2a`, with `/v2/` is `/v2/a`).
 */
function newPath(mod: PathModifier | undefined, match: RouteMatch, fullPath: string): string | undefined {
  if (!mod) return undefined;
  const q = fullPath.indexOf("?");
  const path = q >= 0 ? fullPath.slice(0, q) : fullPath;
  const query = q >= 0 ? fullPath.slice(q) : "";
  if (mod.type === "ReplaceFullPath" && mod.replaceFullPath !== undefined) return mod.replaceFullPath + query;
  if (mod.type !== "ReplacePrefixMatch" || mod.replacePrefixMatch === undefined) return undefined;
  const prefix = match.path?.type === "PathPrefix" ? match.path.value : "/";
  const repl = mod.replacePrefixMatch;
  if (prefix === "/") return repl + path.slice(1) + query;
  if (path === prefix) return repl + query;
  if (path.startsWith(`${prefix}/`)) return repl + path.slice(prefix.length + 1) + query;
  return undefined;
}

/** :authority without its port (`[::1]:80` → `[::1]`: an IPv6 literal ends in `]`, never in `:digits`). */
function authorityHost(authority: string): string {
  return authority.replace(/:\d+$/, "");
}

// MeshHTTPRoute: merge the `to[].rules` of every route for one destination (merge by `matches`, reference §2.5,
// 2.6 order: no specificity sort), pick the first rule whose match fits the request, and turn its
// Request/ResponseHeaderModifier filters into header edits.
import type { HeaderEdits } from "../decision.js";
import { mergeConfs } from "./merge.js";
import type { HeaderModifier, Policy, RouteFilter, RouteMatch, RouteRule, RouteToItem } from "./types.js";

export interface RouteSource {
  policy: Policy;
  /** e.g. "to[0].rules[1]" */
  rule: string;
}

export interface MergedRouteRule {
  matches: RouteMatch[];
  default: RouteRule["default"];
  /** Contributing rules, lowest priority first (the last decided the merged default). */
  sources: RouteSource[];
  compiled: CompiledMatch[];
}

export interface RouteEntry {
  policy: Policy;
  toIndex: number;
  item: RouteToItem;
}

interface CompiledMatch {
  match: RouteMatch;
  pathRe?: RegExp;
  headerRes: Array<RegExp | undefined>;
  queryRes: Array<RegExp | undefined>;
}

/** Entries in ascending priority → merged rules, highest-priority route's rules first. */
export function mergeRouteRules(entries: readonly RouteEntry[]): MergedRouteRule[] {
  const byKey = new Map<string, { pos: number; rule: RouteRule; defaults: unknown[]; sources: RouteSource[] }>();
  let pos = 0;
  for (const e of entries) {
    const rules = e.item.rules.map((rule, j) => ({ rule, j })).reverse();
    for (const { rule, j } of rules) {
      const key = JSON.stringify(rule.matches);
      const prev = byKey.get(key);
      const source = { policy: e.policy, rule: `to[${e.toIndex}].rules[${j}]` };
      if (prev) {
        prev.pos = pos++;
        prev.defaults.push(rule.default);
        prev.sources.push(source);
      } else byKey.set(key, { pos: pos++, rule, defaults: [rule.default], sources: [source] });
    }
  }
  return [...byKey.values()]
    .sort((a, b) => b.pos - a.pos)
    .map((r) => ({
      matches: r.rule.matches,
      default: mergeConfs(r.defaults) as RouteRule["default"],
      sources: r.sources,
      compiled: r.rule.matches.map(compileMatch),
    }));
}

function compileMatch(match: RouteMatch): CompiledMatch {
  const full = (s: string): RegExp | undefined => {
    try {
      return new RegExp(`^(?:${s})$`);
    } catch {
      return undefined;
    }
  };
  return {
    match,
    pathRe: match.path?.type === "RegularExpression" ? full(match.path.value) : undefined,
    headerRes: (match.headers ?? []).map((h) => (h.type === "RegularExpression" ? full(h.value ?? "") : undefined)),
    queryRes: (match.queryParams ?? []).map((q) => (q.type === "RegularExpression" ? full(q.value) : undefined)),
  };
}

export interface RouteRequest {
  method: string;
  path: string;
  headers: ReadonlyMap<string, string>;
}

/** First merged rule with a matching `matches` entry (matches are ORed; fields inside one match ANDed). */
export function findRoute(rules: readonly MergedRouteRule[], req: RouteRequest): { rule: MergedRouteRule; matchIndex: number } | undefined {
  const q = req.path.indexOf("?");
  const path = q >= 0 ? req.path.slice(0, q) : req.path;
  const query = new URLSearchParams(q >= 0 ? req.path.slice(q + 1) : "");
  for (const rule of rules) {
    const i = rule.compiled.findIndex((m) => matches(m, req, path, query));
    if (i >= 0) return { rule, matchIndex: i };
  }
  return undefined;
}

function matches(c: CompiledMatch, req: RouteRequest, path: string, query: URLSearchParams): boolean {
  const m = c.match;
  if (m.path) {
    const v = m.path.value;
    if (m.path.type === "Exact" && path !== v) return false;
    if (m.path.type === "PathPrefix" && !(v === "/" || path === v || path.startsWith(`${v}/`))) return false;
    if (m.path.type === "RegularExpression" && !c.pathRe?.test(path)) return false;
  }
  if (m.method && req.method.toUpperCase() !== m.method) return false;
  for (const [i, h] of (m.headers ?? []).entries()) {
    const have = req.headers.get(h.name.toLowerCase());
    const type = h.type ?? "Exact";
    if (type === "Absent") {
      if (have !== undefined) return false;
      continue;
    }
    if (have === undefined) return false;
    if (type === "Exact" && have !== h.value) return false;
    if (type === "Prefix" && !have.startsWith(h.value ?? "")) return false;
    if (type === "RegularExpression" && !c.headerRes[i]?.test(have)) return false;
  }
  for (const [i, qp] of (m.queryParams ?? []).entries()) {
    const have = query.get(qp.name);
    if (have === null) return false;
    if (qp.type === "Exact" && have !== qp.value) return false;
    if (qp.type === "RegularExpression" && !c.queryRes[i]?.test(have)) return false;
  }
  return true;
}

/** Header modifier filters → edits. `set` "a,b" sets a then appends b; `add` "a,b" appends both. */
export function headerEdits(filters: readonly RouteFilter[] | undefined): { request?: HeaderEdits; response?: HeaderEdits; ignored: string[] } {
  let request: HeaderEdits | undefined;
  let response: HeaderEdits | undefined;
  const ignored: string[] = [];
  for (const f of filters ?? []) {
    if (f.type === "RequestHeaderModifier" && f.requestHeaderModifier) request = apply(request, f.requestHeaderModifier);
    else if (f.type === "ResponseHeaderModifier" && f.responseHeaderModifier) response = apply(response, f.responseHeaderModifier);
    else ignored.push(f.type);
  }
  return { request, response, ignored };
}

function apply(edits: HeaderEdits | undefined, mod: HeaderModifier): HeaderEdits {
  const out: HeaderEdits = edits ?? { set: [], add: [], remove: [] };
  for (const { name, value } of mod.set ?? []) {
    const [first = "", ...rest] = splitValues(value);
    out.set.push([name.toLowerCase(), first]);
    for (const v of rest) out.add.push([name.toLowerCase(), v]);
  }
  for (const { name, value } of mod.add ?? []) for (const v of splitValues(value)) out.add.push([name.toLowerCase(), v]);
  for (const name of mod.remove ?? []) out.remove.push(name.toLowerCase());
  return out;
}

export function splitValues(value: string | undefined): string[] {
  return (value ?? "").split(",").map((v) => v.trim());
}

/** Service names an :authority may stand for: "backend:80", "backend.mesh", "backend.ns.svc.8080.mesh". */
export function destinationCandidates(authority: string): string[] {
  const host = authority.replace(/^\[([^\]]*)\](:\d+)?$/, "$1").replace(/:\d+$/, "").toLowerCase();
  const noMesh = host.endsWith(".mesh") ? host.slice(0, -5) : host;
  return [...new Set([host, noMesh, noMesh.replace(/\./g, "_")])];
}

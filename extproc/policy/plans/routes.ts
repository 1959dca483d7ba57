// MeshHTTPRoute: merge the `to[].rules` of every route for one destination (merge by `matches`: mergeValuesByKey
// on PolicyDefault in meshhttproute/api/v1alpha1/helpers.go), then
// order the routes (2.6: as merged; 2.7+: by match specificity, compare.go) and pick the first whose match
// fits the request. Filters are applied by route-filters.ts.
import { mergeConfs } from "../selection/merge.js";
import type { Policy, RouteMatch, RouteRule, RouteToItem } from "../model/types.js";

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

export interface RouteChoice {
  rule: MergedRouteRule;
  matchIndex: number;
}

/** Merged rules and the order their matches are tried in (each `matches[]` element is one Envoy route). */
export interface RouteTable {
  rules: MergedRouteRule[];
  order: RouteChoice[];
}

/** `specificity` (2.7+): stable sort by CompareMatch; before, rule order then match order. */
export function routeTable(rules: MergedRouteRule[], specificity: boolean): RouteTable {
  const order = rules.flatMap((rule) => rule.matches.map((_, matchIndex) => ({ rule, matchIndex })));
  if (specificity) {
    const indexed = order.map((c, i) => [c, i] as const);
    indexed.sort((a, b) => compareMatch(a[0].rule.matches[a[0].matchIndex]!, b[0].rule.matches[b[0].matchIndex]!) || a[1] - b[1]);
    return { rules, order: indexed.map(([c]) => c) };
  }
  return { rules, order };
}

/** Kuma's CompareMatch (meshhttproute/api/v1alpha1/compare.go): negative = `a` is tried first. */
export function compareMatch(a: RouteMatch, b: RouteMatch): number {
  return comparePath(a.path, b.path) || Number(!a.method) - Number(!b.method) || (b.headers?.length ?? 0) - (a.headers?.length ?? 0) || (b.queryParams?.length ?? 0) - (a.queryParams?.length ?? 0);
}

const PATH_TYPE_RANK = { Exact: 0, PathPrefix: 1, RegularExpression: 2 } as const;

function comparePath(a: RouteMatch["path"], b: RouteMatch["path"]): number {
  if (!a || !b) return Number(!a) - Number(!b);
  if (a.type !== b.type) return PATH_TYPE_RANK[a.type] - PATH_TYPE_RANK[b.type];
  return a.type === "Exact" ? 0 : b.value.length - a.value.length;
}

/** First route (in table order) whose match fits the request (fields inside one match ANDed). */
export function findRoute(table: RouteTable, req: RouteRequest): RouteChoice | undefined {
  const q = req.path.indexOf("?");
  const path = q >= 0 ? req.path.slice(0, q) : req.path;
  const query = new URLSearchParams(q >= 0 ? req.path.slice(q + 1) : "");
  return table.order.find((c) => matches(c.rule.compiled[c.matchIndex]!, req, path, query));
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

export function splitValues(value: string | undefined): string[] {
  return (value ?? "").split(",").map((v) => v.trim());
}

/** Service names an :authority may stand for: "backend:80", "backend.mesh", "backend.ns.svc.8080.mesh". */
export function destinationCandidates(authority: string): string[] {
  // A bracketed IPv6 address loses its brackets and port only: its own last group may look like a port (":1").
  const bracketed = /^\[([^\]]*)\](?::\d+)?$/.exec(authority);
  const host = (bracketed ? bracketed[1]! : authority.replace(/:\d+$/, "")).toLowerCase();
  const noMesh = host.endsWith(".mesh") ? host.slice(0, -5) : host;
  return [...new Set([host, noMesh, noMesh.replace(/\./g, "_")])];
}

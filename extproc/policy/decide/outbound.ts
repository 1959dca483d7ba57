// Decides one outbound request from MeshHTTPRoute rules: destination from :authority (a real MeshService /
// MeshExternalService / MeshMultiZoneService when one claims it, else a kuma.io/service name), first
// matching route, its filters as header edits, a rewrite or a local redirect.
import type { Decision, RequestFacts } from "../../decision.js";
import { routeTableFor, type OutboundPlan } from "../plans/compile.js";
import { resolveDestination, type Destination } from "../plans/destinations.js";
import { applyFilters } from "./route-filters.js";
import { destinationCandidates, findRoute, type MergedRouteRule, type RouteChoice } from "../plans/routes.js";
import { droppedSuffix } from "./route-drops.js";

export interface OutboundEvaluation {
  decision: Decision;
  service: string;
  /** The real resource the request goes to, when one claims the :authority. */
  destination?: Destination;
  rules: MergedRouteRule[];
  matched?: RouteChoice;
  /** Filters of the matched rule that ext_proc cannot apply. */
  notApplied?: string[];
}

export function decideOutbound(plan: OutboundPlan, facts: RequestFacts): OutboundEvaluation {
  const dest = plan.routes.length > 0 ? resolveDestination(facts.authority, plan.resources, plan.mesh) : undefined;
  const candidates = destinationCandidates(facts.authority);
  const service = dest ? dest.service.name : (candidates.find((c) => plan.byService.has(c)) ?? candidates[candidates.length - 1] ?? "");
  const table = plan.routes.length > 0 ? routeTableFor(plan, service, dest) : { rules: [], order: [] };
  const rules = table.rules;
  const matched = findRoute(table, facts);
  const base = { service, rules, ...(dest ? { destination: dest } : {}) };
  if (!matched) {
    const reason = rules.length === 0 ? `no MeshHTTPRoute for destination ${service}` : `no MeshHTTPRoute rule for ${service} matches ${facts.method} ${facts.path}`;
    return { decision: { type: "continue", explain: { action: "allow", kind: "none", reason } }, ...base };
  }
  const source = matched.rule.sources[matched.rule.sources.length - 1]!;
  const conf = matched.rule.default;
  const match = matched.rule.matches[matched.matchIndex]!;
  const applied = applyFilters(conf.filters, conf.backendRefs, match, facts, plan.splitHeaderValues);
  const ignored = applied.notApplied.length > 0 ? `; not applied by ext_proc: ${applied.notApplied.join(", ")}` : "";
  const explain = {
    action: "allow" as const,
    kind: "MeshHTTPRoute" as const,
    policy: source.policy.name,
    rule: source.rule,
    reason: `${facts.method} ${facts.path} to ${service} matched ${source.rule}.matches[${matched.matchIndex}]${ignored}${droppedSuffix(applied.request, applied.response)}`,
  };
  const extra = { ...base, matched, notApplied: applied.notApplied };
  if (applied.redirect) {
    const { status, location } = applied.redirect;
    const decision: Decision = { type: "respond", status, body: "", headers: [["location", location]], explain: { ...explain, reason: `${explain.reason}; redirect ${status} to ${location}` } };
    return { decision, ...extra };
  }
  const decision: Decision = { type: "continue", explain };
  if (applied.request) decision.requestHeaders = applied.request;
  if (applied.response) decision.responseHeaders = applied.response;
  if (applied.clearRouteCache) decision.clearRouteCache = true;
  return { decision, ...extra };
}

// Decides one outbound request from MeshHTTPRoute rules: destination from :authority, first matching merged
// rule, its header modifiers as request/response header edits. No response phase unless edits need it.
import type { Decision, RequestFacts } from "../decision.js";
import { routeRulesFor, type OutboundPlan } from "./compile.js";
import { droppedSuffix } from "./route-drops.js";
import { destinationCandidates, findRoute, headerEdits, type MergedRouteRule } from "./routes.js";

export interface OutboundEvaluation {
  decision: Decision;
  service: string;
  rules: MergedRouteRule[];
  matched?: { rule: MergedRouteRule; matchIndex: number };
}

export function decideOutbound(plan: OutboundPlan, facts: RequestFacts): OutboundEvaluation {
  const candidates = destinationCandidates(facts.authority);
  const service = candidates.find((c) => plan.byService.has(c)) ?? candidates[candidates.length - 1] ?? "";
  const rules = plan.routes.length > 0 ? routeRulesFor(plan, service) : [];
  const matched = findRoute(rules, facts);
  if (!matched) {
    const reason = rules.length === 0 ? `no MeshHTTPRoute for destination ${service}` : `no MeshHTTPRoute rule for ${service} matches ${facts.method} ${facts.path}`;
    return { decision: { type: "continue", explain: { action: "allow", kind: "none", reason } }, service, rules };
  }
  const source = matched.rule.sources[matched.rule.sources.length - 1]!;
  const edits = headerEdits(matched.rule.default.filters);
  const ignored = edits.ignored.length > 0 ? `; filters not applied by ext_proc: ${edits.ignored.join(", ")}` : "";
  const decision: Decision = {
    type: "continue",
    explain: {
      action: "allow",
      kind: "MeshHTTPRoute",
      policy: source.policy.name,
      rule: source.rule,
      reason: `${facts.method} ${facts.path} to ${service} matched ${source.rule}.matches[${matched.matchIndex}]${ignored}${droppedSuffix(edits.request, edits.response)}`,
    },
  };
  if (edits.request) decision.requestHeaders = edits.request;
  if (edits.response) decision.responseHeaders = edits.response;
  return { decision, service, rules, matched };
}

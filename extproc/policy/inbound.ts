// Decides one inbound request: MeshTrafficPermission (mtp.ts), then MeshFaultInjection (abort/delay), then
// MeshRateLimit (token bucket), each on the legacy `from` path or the 2.10+ `rules` path the compiled plan
// holds. Returns the Decision plus a trace of what matched, for /explain.
import type { Decision, Explanation } from "../decision.js";
import type { InboundPlan } from "./compile.js";
import { decidingItem, matchFrom, type FromItem, type FromMatch, type FromPlan } from "./from-items.js";
import type { ClientIdentity } from "./identity.js";
import { tagSetKey } from "./identity.js";
import type { InboundRuleEntry, RulesPlan } from "./inbound-rules.js";
import { decideMtp, type MtpEnv } from "./mtp.js";
import { compileFaults } from "./faults.js";
import { limitPlan } from "./limit-plan.js";
import { faultDecision, limitDecision, respond, type EvalContext, type FaultPlan, type FaultResult, type LimitResult, type Who } from "./outcomes.js";
import { decidingRule, layerLimits, limitScope, stackFaults } from "./rules-decide.js";
import type { PolicyType } from "./types.js";

export interface KindTrace {
  kind: PolicyType;
  /** Legacy path: the plan and the regions the client fell in (shared between requests: read only). */
  plan?: FromPlan;
  matches: readonly FromMatch[];
  /** Rules path: the plan and the rules that applied to the client. */
  rules?: RulesPlan;
  hits?: InboundRuleEntry[];
  outcome: string;
}

/** The regions of a rules-path trace: none (frozen, so one array serves every request). */
const NO_MATCHES: readonly FromMatch[] = Object.freeze([]);

export interface Evaluation {
  decision: Decision;
  trace: KindTrace[];
}

export function decideInbound(plan: InboundPlan, client: ClientIdentity, ctx: EvalContext, env: MtpEnv): Evaluation {
  const trace: KindTrace[] = [];
  const clientKey = client.key ?? tagSetKey(client.tags);
  // Legacy paths name the client by its tags, rules paths by its SPIFFE ID (texts built only when used).
  const describe: Who = () => `client ${clientKey || "(no identity)"} via ${client.source}`;
  const describeId: Who = () => `client ${client.spiffe ?? "(no SPIFFE ID)"}${client.sni ? ` sni ${client.sni}` : ""} via ${client.source}`;
  let allow: Explanation = { action: "allow", kind: "none", reason: `no MeshTrafficPermission selects inbound ${plan.inbound.name}` };

  const legacyMtp = plan.from.MeshTrafficPermission && !(env.identity !== undefined && env.traits.mtpIdentityRulesPath);
  const mtp = decideMtp(plan, client, clientKey, legacyMtp ? describe : describeId, env);
  if (mtp) {
    const t: KindTrace = { kind: "MeshTrafficPermission", matches: mtp.matches ?? NO_MATCHES, outcome: mtp.outcome };
    if (plan.from.MeshTrafficPermission) t.plan = plan.from.MeshTrafficPermission;
    if (plan.rules.MeshTrafficPermission) Object.assign(t, { rules: plan.rules.MeshTrafficPermission, hits: mtp.hit ? [mtp.hit.entry] : [] });
    trace.push(t);
    if (mtp.denied) return { decision: respond(403, "RBAC: access denied", [], mtp.explain, ctx), trace };
    allow = mtp.explain;
  }

  let delayMs = 0;
  const fault = faultStep(plan, client, clientKey, plan.rules.MeshFaultInjection ? describeId : describe, ctx, trace);
  if (fault?.decision) return { decision: fault.decision, trace };
  if (fault?.explain && fault.delayMs > 0) {
    delayMs = fault.delayMs;
    if (allow.action !== "shadow-deny") allow = fault.explain;
    else allow = { ...allow, reason: `${allow.reason}; ${fault.explain.reason}` };
  }

  const limited = limitStep(plan, client, clientKey, plan.rules.MeshRateLimit ? describeId : describe, ctx, trace);
  if (limited?.decision) {
    if (delayMs > 0) limited.decision.delayMs = delayMs;
    return { decision: limited.decision, trace };
  }

  const decision: Decision = { type: "continue", explain: allow };
  if (delayMs > 0) decision.delayMs = delayMs;
  return { decision, trace };
}

function faultStep(plan: InboundPlan, client: ClientIdentity, clientKey: string, describe: Who, ctx: EvalContext, trace: KindTrace[]): FaultResult | undefined {
  const rules = plan.rules.MeshFaultInjection;
  if (rules) {
    const stacked = stackFaults(rules, client);
    const fault = stacked.hits.length > 0 ? faultDecision(stacked, describe, ctx) : undefined;
    trace.push({ kind: "MeshFaultInjection", matches: NO_MATCHES, rules, hits: stacked.hits, outcome: fault?.outcome ?? "no rule for client" });
    return fault;
  }
  const mfi = plan.from.MeshFaultInjection;
  if (!mfi) return undefined;
  const matches = matchFrom(mfi, client.tags, clientKey);
  const first = matches[0];
  const fault = first ? faultDecision((first.faultPlan ??= fromFaultPlan(first)), describe, ctx) : undefined;
  trace.push({ kind: mfi.kind, plan: mfi, matches, outcome: fault?.outcome ?? "no rule for client" });
  return fault;
}

function limitStep(plan: InboundPlan, client: ClientIdentity, clientKey: string, describe: Who, ctx: EvalContext, trace: KindTrace[]): LimitResult | undefined {
  const name = plan.inbound.name;
  const rules = plan.rules.MeshRateLimit;
  if (rules) {
    const layered = layerLimits(rules, client);
    const limited = layered.conf ? limitDecision((layered.limit ??= limitPlan(name, layered.conf.local, decidingRule(layered.hits, "local"), limitScope(name, layered.route))), describe, ctx) : undefined;
    trace.push({ kind: "MeshRateLimit", matches: NO_MATCHES, rules, hits: layered.hits, outcome: limited?.outcome ?? "no rule for client" });
    return limited;
  }
  const mrl = plan.from.MeshRateLimit;
  if (!mrl) return undefined;
  const matches = matchFrom(mrl, client.tags, clientKey);
  const first = matches[0];
  const limited = first ? limitDecision((first.limitPlan ??= limitPlan(name, first.conf.local, source(decidingItem(first, "local")))), describe, ctx) : undefined;
  trace.push({ kind: mrl.kind, plan: mrl, matches, outcome: limited?.outcome ?? "no rule for client" });
  return limited;
}

/** A region's fault list compiled, every element named after the item that last set `http`. */
function fromFaultPlan(match: FromMatch): FaultPlan {
  const src = source(decidingItem(match, "http"));
  return { faults: compileFaults(match.conf.http), sourceOf: () => src };
}

function source(item: FromItem | undefined): { policy: string; rule: string } | undefined {
  return item ? { policy: item.policy.name, rule: `from[${item.index}]` } : undefined;
}

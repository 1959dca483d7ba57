// Decides one inbound request: MeshTrafficPermission (RBAC semantics), then MeshFaultInjection (abort/delay),
// then MeshRateLimit (token bucket). Returns the Decision plus a trace of what matched, for /explain.
import type { Decision, Explanation } from "../decision.js";
import type { InboundPlan } from "./compile.js";
import { faultDecision, limitDecision, respond, type EvalContext } from "./outcomes.js";
import { decidingItem, matchFrom, type FromItem, type FromMatch, type FromPlan } from "./from-items.js";
import type { ClientIdentity } from "./identity.js";
import { tagSetKey } from "./identity.js";
import type { PolicyType } from "./types.js";

export interface KindTrace {
  kind: PolicyType;
  plan: FromPlan;
  matches: FromMatch[];
  outcome: string;
}

export interface Evaluation {
  decision: Decision;
  trace: KindTrace[];
}

const ALLOWING = new Set(["Allow", "AllowWithShadowDeny"]);

export function decideInbound(plan: InboundPlan, client: ClientIdentity, ctx: EvalContext): Evaluation {
  const trace: KindTrace[] = [];
  const clientKey = client.key ?? tagSetKey(client.tags);
  const describe = `client ${clientKey || "(no identity)"} via ${client.source}`;
  let allow: Explanation = { action: "allow", kind: "none", reason: `no MeshTrafficPermission selects inbound ${plan.inbound.name}` };

  const mtp = plan.from.MeshTrafficPermission;
  if (mtp) {
    const matches = matchFrom(mtp, client.tags, clientKey);
    const allowing = matches.filter((m) => ALLOWING.has(String(m.conf.action)));
    if (allowing.length === 0) {
      const item = matches[0] ? decidingItem(matches[0], "action") : undefined;
      const top = mtp.policies[mtp.policies.length - 1]!;
      const reason = item
        ? `${describe}: action ${String(matches[0]!.conf.action)} (last set by ${ruleName(item)})`
        : `${describe}: no from rule of the MeshTrafficPermissions selecting inbound ${plan.inbound.name} matches`;
      trace.push({ kind: mtp.kind, plan: mtp, matches, outcome: "deny" });
      const explain: Explanation = { action: "deny", kind: "MeshTrafficPermission", policy: (item?.policy ?? top).name, reason };
      if (item) explain.rule = `from[${item.index}]`;
      return { decision: respond(403, "RBAC: access denied", [], explain, ctx), trace };
    }
    const shadow = matches.find((m) => m.conf.action === "AllowWithShadowDeny");
    const decidedBy = decidingItem(shadow ?? allowing[0]!, "action")!;
    allow = {
      action: shadow ? "shadow-deny" : "allow",
      kind: "MeshTrafficPermission",
      policy: decidedBy.policy.name,
      rule: `from[${decidedBy.index}]`,
      reason: shadow ? `${describe}: AllowWithShadowDeny (allowed, would be denied)` : `${describe}: Allow`,
    };
    trace.push({ kind: mtp.kind, plan: mtp, matches, outcome: allow.action });
  }

  let delayMs = 0;
  const mfi = plan.from.MeshFaultInjection;
  if (mfi) {
    const matches = matchFrom(mfi, client.tags, clientKey);
    const first = matches[0];
    const fault = first ? faultDecision(first, decidingItem(first, "http"), describe, ctx) : undefined;
    trace.push({ kind: mfi.kind, plan: mfi, matches, outcome: fault?.outcome ?? "no rule for client" });
    if (fault?.decision) return { decision: fault.decision, trace };
    if (fault && fault.delayMs > 0) {
      delayMs = fault.delayMs;
      if (allow.action !== "shadow-deny") allow = fault.explain;
      else allow = { ...allow, reason: `${allow.reason}; ${fault.explain.reason}` };
    }
  }

  const mrl = plan.from.MeshRateLimit;
  if (mrl) {
    const matches = matchFrom(mrl, client.tags, clientKey);
    const first = matches[0];
    const limited = first ? limitDecision(plan.inbound.name, first, decidingItem(first, "local"), describe, ctx) : undefined;
    trace.push({ kind: mrl.kind, plan: mrl, matches, outcome: limited?.outcome ?? "no rule for client" });
    if (limited?.decision) {
      if (delayMs > 0) limited.decision.delayMs = delayMs;
      return { decision: limited.decision, trace };
    }
  }

  const decision: Decision = { type: "continue", explain: allow };
  if (delayMs > 0) decision.delayMs = delayMs;
  return { decision, trace };
}

export function ruleName(item: FromItem): string {
  return `${item.policy.type} ${item.policy.name} from[${item.index}]`;
}

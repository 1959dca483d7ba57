// The `inboundRules` of Kuma's inspect view for one inbound and policy type: the 2.10+ rule list
// (`pkg/plugins/policies/core/rules/inbound` @v2.14.3) — one entry per rule with its single `match`
// (absent = catch-all), its `conf` as a one-element list, and the policy and rule index it came from.
// MeshRateLimit's `from` items count as catch-all rules ("from as rules").
import type { InboundPlan } from "../policy/compile.js";
import type { PolicyType } from "../policy/types.js";
import { type InboundRule, metaOf } from "./inspect-rules.js";

/** Types whose `from` items Kuma folds into the rule list (`IsFromAsRules`); of the four, only MeshRateLimit. */
const FROM_AS_RULES: ReadonlySet<PolicyType> = new Set(["MeshRateLimit"]);

export function inboundRulesOf(plan: InboundPlan, type: PolicyType): InboundRule[] {
  const from = plan.from[type as keyof InboundPlan["from"]];
  if (!from || !FROM_AS_RULES.has(type)) return [];
  return from.items.map((item) => ({ conf: [item.conf], origin: [{ resourceMeta: metaOf(item.policy), ruleIndex: item.index }] }));
}

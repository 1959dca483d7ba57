// The per-inbound parts of Kuma's inspect view for one policy type (`BuildFromRules` in
// `pkg/plugins/policies/core/rules/rules.go` @v2.14.3, which builds both): `inboundRules` — the 2.10+ rule
// list, one entry per rule with its single `match` (absent = catch-all), its `conf` as a one-element list and
// the policy and rule index it came from (MeshRateLimit's `from` items count as catch-all rules) — and the
// legacy `fromRules` over every `from` item of the selecting policies, shown even where `rules` decide.
import type { InboundPlan, Snapshot } from "../plans/compile.js";
import { buildFromPlan, type FromPlan } from "../plans/from-items.js";
import { sortByPrecedence } from "../selection/precedence.js";
import { buildRules } from "../plans/rules.js";
import { groupingOf } from "../plans/subset-groups.js";
import { KIND_TRAITS, type PolicyType, type Tag } from "../model/types.js";
import { type InboundRule, metaOf, type Rule } from "./inspect-shapes.js";

type InboundKind = keyof InboundPlan["from"];

export function inboundRulesOf(plan: InboundPlan, type: PolicyType): InboundRule[] {
  const rules = plan.rules[type as InboundKind];
  if (rules) {
    return rules.rules.map((entry) => ({
      ...(entry.matches?.length ? { match: entry.matches[0] } : {}),
      conf: [entry.conf],
      origin: [{ resourceMeta: metaOf(entry.policy), ruleIndex: entry.ruleIndex }],
    }));
  }
  const from = plan.from[type as InboundKind];
  if (!from || !KIND_TRAITS[type].fromAsRules) return [];
  return from.items.map((item) => ({ conf: [item.conf], origin: [{ resourceMeta: metaOf(item.policy), ruleIndex: item.index }] }));
}

/** Legacy tag-subset rules over every `from` item of the policies of `type` selecting this inbound. */
export function fromRulesOf(snapshot: Snapshot, plan: InboundPlan, type: PolicyType): Rule[] {
  const legacy = legacyPlan(snapshot, plan, type);
  if (!legacy || legacy.items.length === 0) return [];
  return buildRules(legacy.items, groupingOf(snapshot.traits)).rules.map((r) => ({
    matchers: r.subset.map(matcher),
    conf: r.conf,
    origin: legacy.policies.filter((p) => r.origin.includes(p.name)).map(metaOf),
  }));
}

function legacyPlan(snapshot: Snapshot, plan: InboundPlan, type: PolicyType): FromPlan | undefined {
  const from = plan.from[type as InboundKind];
  if (from) return from;
  const rules = plan.rules[type as InboundKind];
  if (!rules) return undefined;
  const withFrom = [...rules.policies, ...rules.ignoredFrom].filter((p) => (p.spec.from?.length ?? 0) > 0);
  return withFrom.length ? buildFromPlan(type, sortByPrecedence(withFrom, snapshot.traits)) : undefined;
}

function matcher(t: Tag): { key: string; value: string; not: boolean } {
  return { key: t.key, value: t.value, not: t.not };
}

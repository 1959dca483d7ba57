// What one policy kind did for one request (the legacy `from` regions or the rules that applied, and the
// outcome): kept with a client's steps, read by /explain and the decision-log audit.
import type { FromMatch, FromPlan } from "../plans/from-items.js";
import type { InboundRuleEntry, RulesPlan } from "../plans/inbound-rules.js";
import type { PolicyType } from "../model/types.js";

/** What one kind did for a request. Traces are shared between requests of the same client: read only. */
export interface KindTrace {
  kind: PolicyType;
  /** Legacy path: the plan and the regions the client fell in. */
  plan?: FromPlan;
  matches: readonly FromMatch[];
  /** Rules path: the plan and the rules that applied to the client. */
  rules?: RulesPlan;
  hits?: InboundRuleEntry[];
  outcome: string;
}
